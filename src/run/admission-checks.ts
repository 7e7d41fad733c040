import { ADMISSION_CHECKS } from "./admission/admission-check-registry.js";
import { type AdmissionFacts, type AdmissionRequest, requestOf } from "./admission/admission-facts.js";
import type { AdmissionCheck } from "./run-schema.js";

export type { AdmissionFacts, AdmissionRequest, RecordedAdmission } from "./admission/admission-facts.js";
export { describeChanges } from "./admission/describe-changes.js";
export { isApplyMode, passedDryRuns } from "./admission/dry-runs.js";
export { decisionsOutside, standingDecisions } from "./admission/standing-decisions.js";
export { liftsNotNamingTheirStop, openStops } from "./admission/stops-holding-back.js";

/** The stop line of SPEC §5, printed when any admission check fails. */
export const ADMISSION_STOP = "!STOP:invalid-reviewed-handoff-or-exact-twin-consent";

/**
 * Run every admission check of SPEC §5 (ADMISSION_CHECKS, in order) and
 * report each with the values it compared. Pure: the caller gathers the
 * facts, and records nothing unless every check passes.
 */
export function runAdmissionChecks(f: AdmissionFacts): { checks: AdmissionCheck[]; request: AdmissionRequest | undefined } {
  const checks = ADMISSION_CHECKS.map((c) => ({ id: c.id, name: c.name, ...c.judge(f) }));
  return { checks, request: requestOf(f) };
}
