import type { PinnedPolicy } from "../home/suite-pins.js";
import type { Workflow } from "../run/run-schema.js";

/**
 * The decisions on `wf`'s current revision (its approved reviews and its
 * latest consent) made under a policy or an executor file the pin no longer
 * holds, said as a sentence; undefined when there are none. A person
 * re-pinned after reviewing a change: admission refuses such decisions
 * (checks `policy` and `executor-file`), so the way on is a re-freeze of the
 * same handoff as a new revision, reviewed and consented to again.
 */
export function decisionsVoidedByRepin(pinned: PinnedPolicy, wf: Workflow): string | undefined {
  const handoff = wf.handoff;
  if (!handoff) return undefined;
  const latestConsent = wf.consents[wf.consents.length - 1];
  const decided = [
    ...wf.reviews.filter((r) => r.revision === handoff.revision && r.decision === "approved"),
    ...(latestConsent?.revision === handoff.revision ? [latestConsent] : []),
  ];
  // The executor as pinned: a file edited since is refused by the pin check itself, and a re-pin binds it here. A pin
  // without the executor's digest (an older twinlock's) needs a re-pin first, which the pin check says.
  const executorNow = pinned.pin.prompts?.[wf.executor];
  if (executorNow === undefined) return undefined;
  const policy = decided.filter((r) => r.policy_digest !== pinned.policyDigest);
  const executor = decided.filter((r) => r.executor_digest !== executorNow);
  if (policy.length === 0 && executor.length === 0) return undefined;
  const what = [
    ...(policy.length > 0 ? [`the pinned policy (now ${pinned.policyDigest})`] : []),
    ...(executor.length > 0 ? [`${wf.executor}'s prompt file (now ${executorNow})`] : []),
  ];
  const kinds = [...new Set([...policy, ...executor].map((r) => r.kind))].join(" and ");
  return `the ${kinds} of revision ${handoff.revision} were made before a re-pin changed ${what.join(" and ")}`;
}
