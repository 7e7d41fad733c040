import { appendFileSync } from "node:fs";
import path from "node:path";
import { readTrustFile } from "../../ci/read-trust-file.js";
import { type VerifyReport, verifyRun } from "../../ci/verify-run.js";
import { changedFilesFromList, changedFilesInRange, changedPathsRoot } from "../../conformance/changed-files.js";
import { UsageError } from "../../errors/errors.js";
import { cleanText } from "../../input/clean-text.js";
import { parseChangeRef } from "../../input/parse-input.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

/** `twinlock verify RUN [--trust FILE] [--changed-files FILE | --git-range A...B] [--summary FILE]`: the CI check. */
export async function runVerify(
  runFile: string,
  o: CommonOptions & { trust?: string; pinnerKey?: string; changedFiles?: string; gitRange?: string; summary?: string; change?: string },
): Promise<CommandResult> {
  if (o.changedFiles !== undefined && o.gitRange !== undefined)
    throw new UsageError("give the changed files once: --changed-files FILE or --git-range A...B, not both");
  const cwd = process.cwd();
  // Listed or from git, changed paths are the checkout's (relative to its top folder), as a plan's targets are.
  const root = changedPathsRoot(cwd, o);
  const trustFile = o.trust ?? path.join(root, "twinlock.yaml");
  const trust = readTrustFile({ file: trustFile, gitRange: o.gitRange, cwd, pinnerKey: o.pinnerKey });
  // The suite in the checkout is the folder of its twinlock.yaml; a signed trust file says nothing of where, so the checkout's top.
  const suiteRoot = /\.ya?ml$/i.test(trustFile) ? path.dirname(path.resolve(cwd, trustFile)) : root;
  const changed =
    o.gitRange !== undefined
      ? await changedFilesInRange(root, o.gitRange)
      : o.changedFiles !== undefined
        ? changedFilesFromList(o.changedFiles, root)
        : undefined;
  const change = o.change === undefined ? undefined : parseChangeRef(o.change, "--change");
  const report = await verifyRun({ runFile, trust, changed, root, change, suiteRoot });
  // Appended: GitHub gives each step one summary file, and other tools may write to it too.
  if (o.summary !== undefined) appendFileSync(path.resolve(o.summary), renderSummary(runFile, report));
  const failed = report.findings.filter((f) => !f.ok).length;
  const text = [
    ...report.findings.map((f) => cleanText(`${f.ok ? "ok  " : "FAIL"}  ${f.check}  ${f.subject}: ${f.message}`)),
    `${failed === 0 ? "verified" : `${failed} finding${failed === 1 ? "" : "s"}`}: run ${report.run_id ?? "(unreadable)"} against the reviewers in ${report.trust_source}${changed ? `, ${changed.length} changed file${changed.length === 1 ? "" : "s"}` : ", changed files not checked"}`,
  ].join("\n");
  return { exitCode: report.ok ? 0 : 1, text, json: report };
}

/** The report as Markdown for `$GITHUB_STEP_SUMMARY`. */
function renderSummary(runFile: string, r: VerifyReport): string {
  const cell = (s: string) => cleanText(s).replace(/\|/g, "\\|");
  const failed = r.findings.filter((f) => !f.ok);
  return [
    `## twinlock verify: ${r.ok ? "verified" : `${failed.length} finding${failed.length === 1 ? "" : "s"}`}`,
    "",
    `Run \`${cell(runFile)}\` (${r.run_id ?? "unreadable"}), reviewers from \`${cell(r.trust_source)}\`.`,
    "",
    "| | check | subject | detail |",
    "|---|---|---|---|",
    ...[...failed, ...r.findings.filter((f) => f.ok)].map(
      (f) => `| ${f.ok ? "✅" : "❌"} | ${f.check} | ${cell(f.subject)} | ${cell(f.message)} |`,
    ),
    "",
  ].join("\n");
}
