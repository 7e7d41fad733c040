import type { AdmissionCheckModule } from "../admission-facts.js";

/** The gate home has no record of this consent being used (one admission per consent, across runs). */
export const consentUnused: AdmissionCheckModule = {
  id: "consumed",
  name: "the gate home has no record of this consent being used",
  reads: ["consumedInHome"],
  judge: (f) => ({
    ok: f.consumedInHome === undefined,
    detail: f.consumedInHome ? `used by an admission at ${f.consumedInHome.at} (run ${f.consumedInHome.run_id})` : "unused",
  }),
  // Offline: within the run, one admission per consent.
  rejudge: ({ receipt, uses }) => (uses > 1 ? [`the consent ${receipt.consent_hash} was already used by an earlier admission`] : []),
};
