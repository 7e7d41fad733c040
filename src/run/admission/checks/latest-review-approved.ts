import { type AdmissionCheckModule, currentReviews, frozenHandoff } from "../admission-facts.js";

/** Check 3: the latest review of the current revision is an approval (a later request for changes withdraws it). */
export const latestReviewApproved: AdmissionCheckModule = {
  id: "3",
  name: "the latest review of the current revision is approved",
  reads: ["workflow"],
  judge(f) {
    const latest = currentReviews(f).at(-1);
    return {
      ok: latest?.decision === "approved",
      detail: latest
        ? `revision ${latest.revision}: ${latest.decision} by ${latest.reviewer}`
        : `no review of revision ${frozenHandoff(f)?.revision ?? 0}`,
    };
  },
  rejudge: {
    offline:
      "replay already refuses an admission from any state but dry_run_ready, which a later request for changes leaves; the chain CI verifies holds that",
  },
};
