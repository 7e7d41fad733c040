import type { Workflow } from "../run-schema.js";

/** The decisions an admission stands on: the approved reviews of the frozen revision, and the latest consent. */
export function standingDecisions(wf: Workflow): Array<Workflow["reviews"][number] | Workflow["consents"][number]> {
  const handoff = wf.handoff;
  const consent = wf.consents[wf.consents.length - 1];
  return [
    ...(handoff ? wf.reviews.filter((r) => r.revision === handoff.revision && r.decision === "approved") : []),
    ...(consent ? [consent] : []),
  ];
}

/**
 * Those of `decided` made under another policy than `policyDigest`, and for
 * another executor file than `executorDigest` (null: it cannot be read, so
 * every decision is outside it): admission's `policy` and `executor-file`
 * checks, and what a re-pin voided.
 */
export function decisionsOutside<T extends { policy_digest: string; executor_digest: string }>(
  decided: readonly T[],
  policyDigest: string | null,
  executorDigest: string | null,
): { otherPolicy: T[]; otherExecutor: T[] } {
  return {
    otherPolicy: decided.filter((r) => r.policy_digest !== policyDigest),
    otherExecutor: decided.filter((r) => r.executor_digest !== executorDigest),
  };
}
