import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import path from "node:path";
import { planSuiteFix, type SuiteFix } from "../../checks/plan-suite-fix.js";
import { validateSuite } from "../../checks/validate-suite.js";
import { formatDiagnostic } from "../../diagnostics/format-diagnostic.js";
import { ConflictError, UsageError } from "../../errors/errors.js";
import { readFailureCode, readRegularFile } from "../../input/read-regular-file.js";
import { atomicWriteFile } from "../../store/atomic-write.js";
import { withFileLock } from "../../store/run-file-lock.js";
import { FILL_IN_MARK } from "../../suite/fill-in-placeholder.js";
import { loadSuite } from "../../suite/load-suite.js";
import { MAX_PROMPT_BYTES } from "../../suite/parse-prompt-file.js";
import { renderInsertionDiff } from "../../suite/render-insertion-diff.js";
import { CONFIG_FILE } from "../../suite/suite-config.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { loadSuiteOption } from "../load-suite-option.js";
import { snakeKeys } from "../snake-keys.js";

export interface ValidateFixOptions extends CommonOptions {
  suite?: string;
  write?: boolean;
  expectPairs?: string;
}

/**
 * `twinlock validate --fix`: the canonical pair metadata and body-block
 * skeletons the suite's prompts lack, as a unified diff; with `--write`,
 * written (each file atomically and durably, none if any changed since it
 * was read), then the suite validated again.
 */
export async function runValidateFix(options: ValidateFixOptions): Promise<CommandResult> {
  if (options.expectPairs !== undefined)
    throw new UsageError("--fix adds what is missing and takes no --expect-pairs; run `twinlock validate --expect-pairs N` after it");
  const suite = loadSuiteOption(options.suite);
  const fix = planSuiteFix(suite);
  const diff = fix.files.map((f) => renderInsertionDiff(f.file, f.before, f.after));
  const placeholders = fix.files.flatMap((f) => f.placeholders.map((tag) => `${f.file}: <${tag}>`));
  const left = fix.left.map((l) => `${l.file}: ${l.promptId}: ${l.message}`);
  const keys = fix.files.reduce((n, f) => n + f.keys.length, 0);
  const blocks = fix.files.reduce((n, f) => n + f.blocks.length, 0);
  const summary = `fix        ${fix.files.length} file${fix.files.length === 1 ? "" : "s"}: ${keys} metadata key${keys === 1 ? "" : "s"}, ${blocks} body block${blocks === 1 ? "" : "s"}`;
  const notes = [
    ...(placeholders.length > 0
      ? [
          `placeholders ${placeholders.length} block${placeholders.length === 1 ? " holds" : "s hold"} ${FILL_IN_MARK} (this prompt's own policy, not derivable); validate reports each as BODY_PLACEHOLDER until you write it:`,
          ...placeholders.map((p) => `  ${p}`),
        ]
      : []),
    ...(left.length > 0
      ? [`left       ${left.length} problem${left.length === 1 ? "" : "s"} --fix does not change:`, ...left.map((l) => `  ${l}`)]
      : []),
  ];
  const json = (written: boolean, extra: Record<string, unknown> = {}) =>
    snakeKeys({
      written,
      files: fix.files.map((f) => ({ file: f.file, keys: f.keys, blocks: f.blocks, placeholders: f.placeholders })),
      left: fix.left,
      diff: diff.join("\n"),
      ...extra,
    });
  if (!options.write) {
    const next = fix.files.length > 0 ? ["", "nothing written; apply with: twinlock validate --fix --write"] : [];
    return { exitCode: 0, text: [...diff, ...(diff.length > 0 ? [""] : []), summary, ...notes, ...next].join("\n"), json: json(false) };
  }
  await writeSuiteFix(suite.root, fix);
  const report = validateSuite(loadSuite(suite.root));
  const text = [
    ...diff,
    ...(diff.length > 0 ? [""] : []),
    `${summary} written`,
    ...notes,
    ...report.diagnostics.map(formatDiagnostic),
    `validate   ${report.errors} problem${report.errors === 1 ? "" : "s"}, ${report.warnings} warning${report.warnings === 1 ? "" : "s"}, ${report.genuinePairs} genuine pairs`,
  ].join("\n");
  return {
    exitCode: report.errors > 0 ? 1 : 0,
    text,
    json: json(true, { ok: report.errors === 0, problems: report.diagnostics }),
  };
}

/**
 * Write a planned fix, holding the suite's lock (`twinlock.yaml.lock`, so two
 * fixes never interleave): every file is read again first (as a regular
 * file within the prompt budget, no link followed) and must hold the bytes
 * the plan was made from, else nothing is written; then each is replaced
 * atomically and durably.
 */
export async function writeSuiteFix(root: string, fix: SuiteFix): Promise<void> {
  if (fix.files.length === 0) return;
  await withFileLock(path.join(root, CONFIG_FILE), () => writeChecked(root, fix));
}

function writeChecked(root: string, fix: SuiteFix): void {
  const changed = fix.files.filter((f) => currentDigest(path.join(root, f.file)) !== f.sha256);
  if (changed.length > 0)
    throw new ConflictError(
      `${changed.map((f) => f.file).join(", ")} changed since the fix was planned; nothing written: run \`twinlock validate --fix\` again and review the new diff`,
    );
  for (const f of fix.files) {
    const file = path.join(root, f.file);
    // Checked once more just before its own write, so a change made while earlier files were written is not overwritten.
    if (currentDigest(file) !== f.sha256)
      throw new ConflictError(
        `${f.file} changed while the fix was being written; run \`twinlock validate --fix\` again (files before it were written)`,
      );
    // The file keeps its own permissions.
    atomicWriteFile(file, f.after, statSync(file).mode & 0o777);
  }
}

function currentDigest(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readRegularFile(file, "prompt file", { maxBytes: MAX_PROMPT_BYTES, noFollow: true });
  } catch (error) {
    if (error instanceof UsageError || readFailureCode(error) !== undefined) return "unreadable";
    throw error;
  }
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}
