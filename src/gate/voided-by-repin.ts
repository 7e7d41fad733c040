import type { PinnedPolicy } from "../home/suite-pins.js";
import { decisionsOutside, standingDecisions } from "../run/admission-checks.js";
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
  // The executor as pinned: a file edited since is refused by the pin check itself, and a re-pin binds it here. A pin
  // without the executor's digest (an older twinlock's) needs a re-pin first, which the pin check says.
  const executorNow = pinned.pin.prompts?.[wf.executor];
  if (executorNow === undefined) return undefined;
  // Admission's own test, on this revision's decisions (a consent of an earlier revision was voided by its re-freeze).
  const decided = standingDecisions(wf).filter((r) => r.revision === handoff.revision);
  const { otherPolicy, otherExecutor } = decisionsOutside(decided, pinned.policyDigest, executorNow);
  if (otherPolicy.length === 0 && otherExecutor.length === 0) return undefined;
  const what = [
    ...(otherPolicy.length > 0 ? [`the pinned policy (now ${pinned.policyDigest})`] : []),
    ...(otherExecutor.length > 0 ? [`${wf.executor}'s prompt file (now ${executorNow})`] : []),
  ];
  const kinds = [...new Set([...otherPolicy, ...otherExecutor].map((r) => r.kind))].join(" and ");
  return `the ${kinds} of revision ${handoff.revision} were made before a re-pin changed ${what.join(" and ")}`;
}
