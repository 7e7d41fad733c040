import type { ActionRecord, CriterionRecord } from "../handoff/handoff-model.js";
import { actionTargetGlobs, literalPathScope, pathScope } from "./action-targets.js";

/** One file the executor changed, by POSIX path relative to the checkout root; `sha256` null when it was deleted. */
export interface ChangedFile {
  path: string;
  sha256: string | null;
}

/** The recorded result of one verification run against an acceptance criterion. */
export interface CriterionEvidence {
  id: string;
  result: "passed" | "failed";
  command: string;
}

/** The executed change held against the plan: what was not done, what went outside it, what was not shown. */
export interface Conformance {
  /** Actions none of whose targets a changed file lies in (or that name no path at all). */
  actions_not_done: string[];
  /** Changed files inside no action's target nor the run's own records. */
  files_outside_plan: string[];
  /** Criteria no verification result was recorded for. */
  criteria_without_evidence: string[];
  /** Criteria whose recorded result is `failed`. */
  criteria_failed: string[];
}

/**
 * Compare what was executed with what was approved (pure): each action is
 * done when a changed file lies in one of its targets; each changed file
 * must lie in some action's target or in `ownRecords` (the run file and the
 * handoff folder, which a run changes by itself); each criterion needs a
 * recorded result.
 */
export function checkConformance(input: {
  actions: readonly Pick<ActionRecord, "id" | "target">[];
  criteria: readonly Pick<CriterionRecord, "id">[];
  changed: readonly ChangedFile[];
  evidence: readonly CriterionEvidence[];
  ownRecords?: readonly string[];
}): Conformance {
  const scopes = input.actions.map((a) => ({ id: a.id, scope: pathScope(actionTargetGlobs(a.target)) }));
  // The run's own records are paths the agent named: compared literally.
  const own = literalPathScope(input.ownRecords ?? []);
  const done = new Set<string>();
  const outside: string[] = [];
  for (const f of input.changed) {
    const hits = scopes.filter((s) => s.scope.includes(f.path));
    for (const h of hits) done.add(h.id);
    if (hits.length === 0 && !own.includes(f.path)) outside.push(f.path);
  }
  const shown = new Set(input.evidence.map((e) => e.id));
  return {
    actions_not_done: input.actions.filter((a) => !done.has(a.id)).map((a) => a.id),
    files_outside_plan: outside,
    criteria_without_evidence: input.criteria.filter((c) => !shown.has(c.id)).map((c) => c.id),
    criteria_failed: input.evidence.filter((e) => e.result === "failed").map((e) => e.id),
  };
}
