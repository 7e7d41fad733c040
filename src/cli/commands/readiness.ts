import { formatDiagnostic } from "../../diagnostics/format-diagnostic.js";
import { UsageError } from "../../errors/errors.js";
import { checkReadiness } from "../../handoff/check-readiness.js";
import type { HandoffFormat } from "../../handoff/handoff-format.js";
import { readFormatSchemas } from "../../handoff/read-format-schemas.js";
import { selectHandoffFormat } from "../../handoff/select-handoff-format.js";
import { cleanText } from "../../input/clean-text.js";
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
  const { format, defaulted } = handoffFormatOption(options);
  const r = checkReadiness(dir, format);
  const c = r.counts;
  // File names, questions and owners are agent-written: each printed as one clean line.
  const lines = [
    ...r.problems.map((p) => cleanText(`${p.file}${p.record ? ` [${p.record}]` : ""}: ${p.message}`)),
    ...r.openUnknowns.map((u) => cleanText(`open ?UNKNOWN:${u.id}: ${u.question}${u.owner ? ` (owner: ${u.owner})` : ""}`)),
    ...(defaulted && !r.ready
      ? [
          `(no ${CONFIG_FILE} was found above the current folder, so the handoff was read in twinlock's own format; for a suite's format pass --suite DIR, or --format mission-directives)`,
        ]
      : []),
    `${r.ready ? "ready" : "not ready"}: ${c.evidence} evidence, ${c.findings} finding${c.findings === 1 ? "" : "s"}, ${c.unknowns} unknowns (${r.openUnknowns.length} open), ${c.actions} actions, ${c.criteria} criteria, ${c.files} files; ${r.problems.length} problem${r.problems.length === 1 ? "" : "s"} (format ${r.format})`,
  ];
  const { model: _model, ...json } = r;
  return { exitCode: r.ready ? 0 : 1, text: lines.join("\n"), json: snakeKeys({ ok: r.ready, ...json }) };
}

/**
 * The handoff format readiness judges by: `--format` (twinlock or
 * mission-directives), else the format of the suite (`--suite`,
 * TWINLOCK_SUITE, else the nearest twinlock.yaml upward), else twinlock's own.
 * A custom format needs its suite, for the schemas and the mapping.
 */
function handoffFormatOption(options: ReadinessOptions): { format: HandoffFormat; defaulted: boolean } {
  if (options.format !== undefined) {
    if (options.suite !== undefined)
      throw new UsageError("readiness takes --suite DIR or --format NAME, not both: the suite's twinlock.yaml names its format");
    if (options.format === "custom")
      throw new UsageError("--format custom needs the schemas and mapping in twinlock.yaml: pass --suite DIR instead");
    if (!(HANDOFF_FORMATS as readonly string[]).includes(options.format))
      throw new UsageError(
        `--format ${JSON.stringify(options.format.slice(0, 40))} is not a handoff format; use twinlock or mission-directives (or --suite DIR for a custom one)`,
      );
    return { format: selectHandoffFormat({ format: options.format as "twinlock" | "mission-directives" }), defaulted: false };
  }
  let root: string;
  try {
    root = findSuiteRoot({ suite: options.suite });
  } catch (error) {
    // No suite named and none found upward: the handoff is in twinlock's own format.
    if (options.suite === undefined && !process.env.TWINLOCK_SUITE && error instanceof UsageError)
      return { format: selectHandoffFormat(undefined), defaulted: true };
    throw error;
  }
  const { config, diagnostics } = loadSuiteConfig(root);
  const first = diagnostics[0];
  if (first)
    throw new UsageError(`${CONFIG_FILE} of the suite at ${root} is invalid, so its handoff format is unknown: ${formatDiagnostic(first)}`);
  return { format: selectHandoffFormat(config.handoff, readFormatSchemas(root, config.handoff)), defaulted: false };
}
