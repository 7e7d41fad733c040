import { type AdmissionCheckModule, latestConsent } from "../admission-facts.js";

/** Check 5: the consent receipt is granted and names this exact executor. */
export const consentNamesExecutor: AdmissionCheckModule = {
  id: "5",
  name: "the consent receipt names this exact executor",
  reads: ["workflow", "requestedExecutor"],
  judge(f) {
    const consent = latestConsent(f);
    return {
      ok: consent !== undefined && consent.decision === "approved" && consent.executor === f.requestedExecutor,
      detail: consent
        ? `consent (${consent.decision}) names ${consent.executor} (${consent.executor_title}); requested ${f.requestedExecutor}`
        : "no consent recorded",
    };
  },
  rejudge: ({ receipt, consent }) =>
    !consent
      ? [`the consent ${receipt.consent_hash} it names is not in the run before it`]
      : [
          ...(consent.decision !== "approved" ? ["the consent it names was declined"] : []),
          ...(consent.executor !== receipt.executor ? [`the consent names ${consent.executor}, not the admitted ${receipt.executor}`] : []),
        ],
};
