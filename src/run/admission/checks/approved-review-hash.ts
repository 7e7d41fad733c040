import { type AdmissionCheckModule, currentReviews, frozenHandoff } from "../admission-facts.js";

/** Check 2: the approved review's hash equals the current frozen hash. */
export const approvedReviewHash: AdmissionCheckModule = {
  id: "2",
  name: "the approved review's hash equals the current frozen hash",
  reads: ["workflow"],
  judge(f) {
    const handoff = frozenHandoff(f);
    const approved = currentReviews(f)
      .filter((r) => r.decision === "approved")
      .pop();
    return {
      ok: approved !== undefined && handoff !== null && approved.handoff_hash === handoff.hash,
      detail:
        handoff === null
          ? "nothing is frozen"
          : approved
            ? `approved ${approved.handoff_hash}, frozen ${handoff.hash}`
            : `no approved review of revision ${handoff.revision} (${handoff.hash})`,
    };
  },
  // Offline: the consent the admission names is for a hash and revision an approved review approved.
  rejudge: ({ workflow, consent }) => {
    if (!consent) return [];
    const approved = workflow.reviews.find(
      (r) => r.decision === "approved" && r.handoff_hash === consent.handoff_hash && r.revision === consent.revision,
    );
    return approved ? [] : [`the consent is for ${consent.handoff_hash} revision ${consent.revision}, which no approved review approved`];
  },
};
