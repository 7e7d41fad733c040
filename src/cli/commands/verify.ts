import { appendFileSync, statSync } from "node:fs";
import path from "node:path";
import { readTrustFile } from "../../ci/read-trust-file.js";
import { type VerifyReport, verifyRun } from "../../ci/verify-run.js";
import { changedFilesFromList, changedFilesInRange, changedPathsRoot, requireRangeCommits } from "../../conformance/changed-files.js";
import { UsageError } from "../../errors/errors.js";
import { cleanText } from "../../input/clean-text.js";
import { parseChangeRef } from "../../input/parse-input.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

/**
 * `twinlock verify RUN [--suite DIR] [--trust FILE] [--changed-files FILE | --git-range A...B] [--summary FILE]`:
 * the CI check. The suite's folder in the checkout (where a team-store run's
 * `suite:` handoff folder is read from) is `--suite`, else the folder of a
 * twinlock.yaml-shaped `--trust`, else the checkout's top; `--trust` defaults
 * to that folder's twinlock.yaml.
 */
export async function runVerify(
  runFile: string,
  o: CommonOptions & {
    suite?: string;
    trust?: string;
    pinnerKey?: string;
    changedFiles?: string;
    gitRange?: string;
    summary?: string;
    change?: string;
  },
): Promise<CommandResult> {
  if (o.changedFiles !== undefined && o.gitRange !== undefined)
    throw new UsageError("give the changed files once: --changed-files FILE or --git-range A...B, not both");
  const cwd = process.cwd();
  // Listed or from git, changed paths are the checkout's (relative to its top folder), as a plan's targets are.
  const root = changedPathsRoot(cwd, o);
  const suiteDir = o.suite === undefined ? undefined : suiteFolder(o.suite, cwd);
  const trustFile = o.trust ?? path.join(suiteDir ?? root, "twinlock.yaml");
  if (o.gitRange !== undefined) requireRangeCommits(root, o.gitRange);
  const trust = readTrustFile({
    file: trustFile,
    gitRange: o.gitRange,
    cwd,
    pinnerKey: o.pinnerKey,
    ...(o.trust === undefined ? { defaultFrom: suiteDir === undefined ? "the checkout's top folder" : `--suite ${o.suite}` } : {}),
  });
  // The suite in the checkout: as given; else the folder of its twinlock.yaml; a signed trust file says nothing of where, so the checkout's top.
  const suiteRoot = suiteDir ?? (/\.ya?ml$/i.test(trustFile) ? path.dirname(path.resolve(cwd, trustFile)) : root);
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

/** `--suite DIR` as an absolute folder (a run's `suite:` folders are read below it); no folder there is bad usage. */
function suiteFolder(given: string, cwd: string): string {
  const abs = path.resolve(cwd, given);
  if (!statSync(abs, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(
      `--suite ${given} is no folder (in ${cwd}); give the folder that holds the suite's twinlock.yaml, e.g. prompts/suite`,
    );
  return abs;
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
