import { checkBodies } from "../../checks/check-bodies.js";
import { sortDiagnostics } from "../../diagnostics/diagnostic.js";
import { formatDiagnostic } from "../../diagnostics/format-diagnostic.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { loadSuiteOption } from "../load-suite-option.js";
import { snakeKeys } from "../snake-keys.js";

export interface AuditBodiesOptions extends CommonOptions {
  suite?: string;
  check?: boolean;
}

/**
 * `twinlock audit-bodies`: the body rules of SPEC §2 alone. It reports and
 * exits 0; with `--check` any problem exits 1 (for CI).
 */
export function runAuditBodies(options: AuditBodiesOptions): CommandResult {
  const suite = loadSuiteOption(options.suite);
  const diagnostics = sortDiagnostics([...suite.diagnostics.filter((d) => d.severity === "error"), ...checkBodies(suite)]);
  const problems = diagnostics.filter((d) => d.severity === "error").length;
  const text = [
    ...diagnostics.map(formatDiagnostic),
    `${suite.prompts.length} prompt bodies audited, ${problems} problem${problems === 1 ? "" : "s"}`,
  ].join("\n");
  return {
    exitCode: options.check && problems > 0 ? 1 : 0,
    text,
    json: snakeKeys({ ok: problems === 0, prompts: suite.prompts.length, problems, diagnostics }),
  };
}
