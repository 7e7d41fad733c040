import type { AdmissionCheckModule } from "../admission-facts.js";
import { decisionsOutside, standingDecisions } from "../standing-decisions.js";

/** The review and consent were made under the pinned policy as it is now. */
export const policyUnchanged: AdmissionCheckModule = {
  id: "policy",
  name: "the review and consent were made under the pinned policy as it is now",
  reads: ["workflow", "policyDigestNow", "executorDigestNow"],
  judge(f) {
    const decided = f.workflow ? standingDecisions(f.workflow) : [];
    const { otherPolicy } = decisionsOutside(decided, f.policyDigestNow, f.executorDigestNow);
    return {
      ok: decided.length > 0 && f.policyDigestNow !== null && otherPolicy.length === 0,
      detail:
        f.policyDigestNow === null
          ? "the pinned policy cannot be read"
          : decided.length === 0
            ? `no review or consent stands yet to be made under the pinned policy (now ${f.policyDigestNow}): a person reviews the plan and consents first`
            : otherPolicy.length
              ? `${otherPolicy.map((r) => `${r.kind} under ${r.policy_digest}`).join(", ")}; policy now ${f.policyDigestNow}: the policy changed since the decision`
              : `policy ${f.policyDigestNow}`,
    };
  },
  rejudge: { offline: "the pinned policy's digest at the admission is in the gate home; CI judges the receipts under the policy it pins" },
};
