import { validateSuite } from "../../checks/validate-suite.js";
import type { DiagnosticCode } from "../../diagnostics/diagnostic.js";
import { formatDiagnostic } from "../../diagnostics/format-diagnostic.js";
import { UsageError } from "../../errors/errors.js";
import { parseCount } from "../../input/parse-input.js";
import { foundRole } from "../../twin/check-pair-member.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { loadSuiteOption } from "../load-suite-option.js";
import { snakeKeys } from "../snake-keys.js";
import { colourEnabled, makeStyle } from "../style.js";

export interface ValidateOptions extends CommonOptions {
  suite?: string;
  expectPairs?: string;
  write?: boolean;
}

/** `twinlock validate`: every check of SPEC §3, a summary, and one line per problem. */
export function runValidate(options: ValidateOptions): CommandResult {
  if (options.write) throw new UsageError("--write applies a fix: use it with --fix (`twinlock validate --fix --write`)");
  const expectPairs = options.expectPairs === undefined ? undefined : parseCount(options.expectPairs, "--expect-pairs");
  const suite = loadSuiteOption(options.suite);
  const report = validateSuite(suite, { expectPairs });
  const s = makeStyle(!options.json && colourEnabled());
  // A prompt_role that is not a role is counted as what the file says, not as none.
  const stated = new Map<string, number>();
  for (const p of suite.prompts)
    if (p.role === undefined && typeof p.frontmatter.prompt_role === "string") {
      const role = foundRole(p, "none");
      stated.set(role, (stated.get(role) ?? 0) + 1);
    }
  const roles = [
    ...Object.entries(report.roles).map(([r, n]): [string, number] => [r, r === "none" ? n - sum(stated.values()) : n]),
    ...stated,
  ]
    .filter(([, n]) => n > 0)
    .map(([r, n]) => `${n} ${r}`)
    .join(", ");
  const declared = report.declaredPairs === null ? "" : ` (declared ${report.declaredPairs})`;
  const lines = [
    ...report.diagnostics.map((d) => (d.severity === "error" ? s.red(formatDiagnostic(d)) : s.yellow(formatDiagnostic(d)))),
    ...(report.diagnostics.length > 0 ? [""] : []),
    `suite      ${report.suiteId ?? "(no suite_id)"} at ${report.suiteRoot}`,
    `prompts    ${report.prompts}${roles ? ` (${roles})` : ""}`,
    `pairs      ${report.genuinePairs} genuine${declared}: ${listPairs(report.pairs)}`,
    `refusal    ${report.genuinePairs} twin${report.genuinePairs === 1 ? "" : "s"} accepted and every other executive refused (${report.refusalJudgements} judgements)`,
    `problems   ${report.errors === 0 ? s.green("0") : s.red(String(report.errors))}, warnings ${report.warnings}`,
    ...(report.diagnostics.some((d) => PAIR_SHAPE.has(d.code)) ? [PAIR_SHAPE_HINT] : []),
  ];
  const { twins: _twins, ...json } = report;
  return { exitCode: report.errors > 0 ? 1 : 0, text: lines.join("\n"), json: snakeKeys({ ok: report.errors === 0, ...json }) };
}

/** Problems of a pair's shape: the canonical metadata or a body block it lacks. */
const PAIR_SHAPE = new Set<DiagnosticCode>(["PAIR_METADATA", "BODY_BLOCK_MISSING"]);

const PAIR_SHAPE_HINT =
  'a pair lacks its metadata or body blocks: `twinlock new-pair` writes a new pair with all of them; docs/reference.md, section "The prompt suite" (a paired planner, a paired executor, bodies), lists what an existing pair must carry';

const sum = (ns: Iterable<number>) => [...ns].reduce((a, b) => a + b, 0);

/** Most pairs the text report names; a larger suite's list is in `--json`. */
const LISTED_PAIRS = 40;

function listPairs(pairs: ReadonlyArray<{ planner: string; executor: string }>): string {
  if (pairs.length === 0) return "none";
  // The report lists them in natural ID order already.
  const shown = pairs.slice(0, LISTED_PAIRS).map((p) => `${p.planner}→${p.executor}`);
  const more = pairs.length - shown.length;
  return more > 0 ? `${shown.join(" ")} … and ${more} more (all with --json)` : shown.join(" ");
}
