import type { Workflow } from "../run-schema.js";

/** Modes that change a system: an executor declaring `dry_run_required` is admitted in them only after a passed dry run. */
export function isApplyMode(mode: string): boolean {
  return mode === "APPLY_SAFE" || mode === "APPLY_APPROVED";
}

/** The dry runs of the workflow's current frozen hash and revision whose result was recorded as passed (receipts not yet judged). */
export function passedDryRuns(wf: Workflow): Workflow["dry_runs"] {
  const handoff = wf.handoff;
  return wf.dry_runs.filter(
    (d) => handoff !== null && d.handoff_hash === handoff.hash && d.revision === handoff.revision && d.result === "passed",
  );
}
