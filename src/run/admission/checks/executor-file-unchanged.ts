import type { AdmissionCheckModule } from "../admission-facts.js";
import { decisionsOutside, standingDecisions } from "../standing-decisions.js";

/** The executor prompt file is byte for byte the one reviewed and consented to. */
export const executorFileUnchanged: AdmissionCheckModule = {
  id: "executor-file",
  name: "the executor prompt file is byte for byte the one reviewed and consented to",
  reads: ["workflow", "policyDigestNow", "executorDigestNow"],
  judge(f) {
    const decided = f.workflow ? standingDecisions(f.workflow) : [];
    const { otherExecutor } = decisionsOutside(decided, f.policyDigestNow, f.executorDigestNow);
    return {
      ok: decided.length > 0 && f.executorDigestNow !== null && otherExecutor.length === 0,
      detail:
        f.executorDigestNow === null
          ? "the executor prompt file cannot be read"
          : decided.length === 0
            ? `no review or consent stands yet to bind the executor file (now ${f.executorDigestNow}): a person reviews the plan and consents first`
            : otherExecutor.length
              ? `${otherExecutor.map((r) => `${r.kind} for ${r.executor_digest}`).join(", ")}; file now ${f.executorDigestNow}: the executor prompt changed since the decision`
              : `the pair's executor file is still ${f.executorDigestNow}`,
    };
  },
  rejudge: {
    offline: "the executor file at the admission is not in the run; the receipts bind its digest, which CI's trust judgement reads",
  },
};
