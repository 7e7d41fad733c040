import path from "node:path";
import { formatDiagnostic } from "../../diagnostics/format-diagnostic.js";
import { UsageError } from "../../errors/errors.js";
import { checkReadiness } from "../../handoff/check-readiness.js";
import type { HandoffFormat } from "../../handoff/handoff-format.js";
import { readFormatSchemas } from "../../handoff/read-format-schemas.js";
import { selectHandoffFormat } from "../../handoff/select-handoff-format.js";
import { cleanText } from "../../input/clean-text.js";
import { parseChoice } from "../../input/parse-input.js";
import { findSuiteRoot } from "../../suite/find-suite-root.js";
import { loadSuiteConfig } from "../../suite/load-suite.js";
import { CONFIG_FILE, HANDOFF_FORMATS } from "../../suite/suite-config.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { snakeKeys } from "../snake-keys.js";

export interface ReadinessOptions extends CommonOptions {
  suite?: string;
  format?: string;
}

/** `twinlock readiness DIR`: every problem with its file and record ID; exit 1 when not ready. */
export function runReadiness(dir: string, options: ReadinessOptions): CommandResult {
  const { format, defaulted } = handoffFormatOption(options, dir);
  const r = checkReadiness(dir, format);
  const c = r.counts;
  // File names, questions and owners are agent-written: each printed as one clean line.
  // The format guessed is said first and last: a handoff in another format gets a page of problems in between.
  const guessed = defaulted && !r.ready;
  const formatNote = `(no ${CONFIG_FILE} was found above the handoff folder or the current folder, so the handoff was read in twinlock's own format; for a suite's format pass --suite DIR, or --format mission-directives)`;
  const lines = [
    ...(guessed && r.problems.length > 5 ? [formatNote] : []),
    ...r.problems.map((p) => cleanText(`${p.file}${p.record ? ` [${p.record}]` : ""}: ${p.message}`)),
    ...r.openUnknowns.map((u) => cleanText(`open ?UNKNOWN:${u.id}: ${u.question}${u.owner ? ` (owner: ${u.owner})` : ""}`)),
    ...(guessed ? [formatNote] : []),
    `${r.ready ? "ready" : "not ready"}: ${c.evidence} evidence, ${c.findings} finding${c.findings === 1 ? "" : "s"}, ${c.unknowns} unknown${c.unknowns === 1 ? "" : "s"} (${r.openUnknowns.length} open), ${c.actions} actions, ${c.criteria} criteria, ${c.files} files; ${r.problems.length} problem${r.problems.length === 1 ? "" : "s"} (format ${r.format})`,
  ];
  const { model: _model, ...json } = r;
  return { exitCode: r.ready ? 0 : 1, text: lines.join("\n"), json: snakeKeys({ ok: r.ready, ...json }) };
}

/**
 * The handoff format readiness judges by: `--format` (twinlock or
 * mission-directives), else the format of the suite (`--suite`,
 * TWINLOCK_SUITE, else the nearest twinlock.yaml above the handoff folder,
 * else above the current folder), else twinlock's own. A custom format needs
 * its suite, for the schemas and the mapping.
 */
function handoffFormatOption(options: ReadinessOptions, dir: string): { format: HandoffFormat; defaulted: boolean } {
  if (options.format !== undefined) {
    if (options.suite !== undefined)
      throw new UsageError("readiness takes --suite DIR or --format NAME, not both: the suite's twinlock.yaml names its format");
    if (options.format === "custom")
      throw new UsageError("--format custom needs the schemas and mapping in twinlock.yaml: pass --suite DIR instead");
    const named = parseChoice(
      options.format,
      HANDOFF_FORMATS.filter((f) => f !== "custom") as Array<"twinlock" | "mission-directives">,
      "--format",
    );
    return { format: selectHandoffFormat({ format: named }), defaulted: false };
  }
  let root: string | undefined;
  if (options.suite !== undefined || process.env.TWINLOCK_SUITE) root = findSuiteRoot({ suite: options.suite });
  else {
    // No suite named: the one the handoff sits in (where a planner writes it), else the one the caller is in.
    for (const cwd of [path.resolve(dir), process.cwd()]) {
      try {
        root = findSuiteRoot({ cwd });
        break;
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
      }
    }
    if (root === undefined) return { format: selectHandoffFormat(undefined), defaulted: true };
  }
  const { config, diagnostics } = loadSuiteConfig(root);
  const first = diagnostics[0];
  if (first)
    throw new UsageError(`${CONFIG_FILE} of the suite at ${root} is invalid, so its handoff format is unknown: ${formatDiagnostic(first)}`);
  return { format: selectHandoffFormat(config.handoff, readFormatSchemas(root, config.handoff)), defaulted: false };
}
