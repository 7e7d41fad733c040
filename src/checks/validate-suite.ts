import { existsSync } from "node:fs";
import path from "node:path";
import { type Diagnostic, sortDiagnostics } from "../diagnostics/diagnostic.js";
import { naturalCompare } from "../input/natural-order.js";
import type { Suite } from "../suite/load-suite.js";
import { configKeyPosition } from "../suite/load-suite.js";
import { PROMPT_ROLES } from "../suite/prompt.js";
import type { ExactTwin } from "../twin/resolve-exact-twin.js";
import { checkBodies } from "./check-bodies.js";
import { checkGraphFresh, DEFAULT_GRAPH_FILE } from "./check-graph-fresh.js";
import { checkPairCount } from "./check-pair-count.js";
import { checkPairs } from "./check-pairs.js";
import { checkReferences } from "./check-references.js";
import { checkStateMachine } from "./check-state-machine.js";
import { checkSuiteSigned } from "./check-suite-signed.js";
import { checkTrustConfig } from "./check-trust-config.js";
import { checkTwinRefusal } from "./check-twin-refusal.js";

/** The outcome of `validate`: counts for the summary and every problem, sorted. */
export interface ValidationReport {
  suiteRoot: string;
  suiteId: string | null;
  prompts: number;
  roles: Record<string, number>;
  genuinePairs: number;
  declaredPairs: number | null;
  pairs: Array<{ planner: string; executor: string; executorTitle: string | null }>;
  refusalJudgements: number;
  errors: number;
  warnings: number;
  diagnostics: Diagnostic[];
  /** The resolved pairs, for callers that go on to build the graph. */
  twins: ExactTwin[];
}

/**
 * Run every check of SPEC §3 on a loaded suite: parse, pairs, references,
 * count, bodies, the runtime's state machine and its twin refusal.
 * `expectPairs` overrides the config's declared count.
 */
export function validateSuite(suite: Suite, options: { expectPairs?: number; bodies?: boolean; graph?: boolean } = {}): ValidationReport {
  const diagnostics: Diagnostic[] = [...suite.diagnostics];
  const { diagnostics: pairProblems, pairs } = checkPairs(suite);
  diagnostics.push(...pairProblems);
  diagnostics.push(...checkReferences(suite));
  const declared = options.expectPairs ?? suite.config.declared_pairs;
  const source = options.expectPairs !== undefined ? "--expect-pairs" : "twinlock.yaml declared_pairs";
  diagnostics.push(
    ...checkPairCount(
      pairs.length,
      declared,
      source,
      options.expectPairs === undefined ? () => configKeyPosition(suite.root, "declared_pairs") : undefined,
    ),
  );
  if (options.bodies !== false) diagnostics.push(...checkBodies(suite));
  diagnostics.push(...checkTrustConfig(suite), ...checkSuiteSigned(suite));
  diagnostics.push(...checkStateMachine());
  // The committed graph is checked when the suite names one or has the default file.
  const configBroken = suite.diagnostics.some((d) => d.code === "CONFIG_INVALID");
  if (
    options.graph !== false &&
    !configBroken &&
    (suite.config.graph_file !== undefined || existsSync(path.join(suite.root, DEFAULT_GRAPH_FILE)))
  ) {
    diagnostics.push(...checkGraphFresh(suite, pairs).diagnostics);
  }
  const refusal = checkTwinRefusal(suite, pairs);
  diagnostics.push(...refusal.diagnostics);

  const roles: Record<string, number> = {};
  for (const role of PROMPT_ROLES) roles[role] = 0;
  for (const p of suite.prompts) {
    const key = p.role ?? "none";
    roles[key] = (roles[key] ?? 0) + 1;
  }
  const sorted = sortDiagnostics(diagnostics);
  return {
    suiteRoot: suite.root,
    suiteId: suite.config.suite_id ?? null,
    prompts: suite.prompts.length,
    roles,
    genuinePairs: pairs.length,
    declaredPairs: declared ?? null,
    // In natural ID order (MD-8 before MD-27 before MD-100), as a person reads them.
    pairs: pairs
      .map((t) => ({ planner: t.planner.id, executor: t.executor.id, executorTitle: t.executor.title ?? null }))
      .sort((a, b) => naturalCompare(a.planner, b.planner)),
    refusalJudgements: refusal.judged,
    errors: sorted.filter((d) => d.severity === "error").length,
    warnings: sorted.filter((d) => d.severity === "warning").length,
    diagnostics: sorted,
    twins: pairs,
  };
}
