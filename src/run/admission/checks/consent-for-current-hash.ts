import { type AdmissionCheckModule, frozenHandoff, latestConsent } from "../admission-facts.js";

/** Check 6: the consent is for the current frozen hash and revision. */
export const consentForCurrentHash: AdmissionCheckModule = {
  id: "6",
  name: "the consent is for the current handoff hash",
  reads: ["workflow"],
  judge(f) {
    const consent = latestConsent(f);
    const handoff = frozenHandoff(f);
    return {
      ok: consent !== undefined && handoff !== null && consent.handoff_hash === handoff.hash && consent.revision === handoff.revision,
      detail:
        consent && handoff
          ? `consent for ${consent.handoff_hash} (revision ${consent.revision}), frozen ${handoff.hash} (revision ${handoff.revision})`
          : "no consent or nothing frozen",
    };
  },
  rejudge: {
    offline:
      "judged offline with check 2 (the consent's hash and revision are those an approved review approved); replay voids a consent when a new revision is frozen",
  },
};
