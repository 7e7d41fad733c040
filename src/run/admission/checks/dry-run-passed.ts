import { type AdmissionCheckModule, frozenHandoff, requestOf } from "../admission-facts.js";
import { isApplyMode, passedDryRuns } from "../dry-runs.js";

/** An executor declaring `dry_run_required` has a passed, trusted dry run of this hash before it applies. */
export const dryRunPassed: AdmissionCheckModule = {
  id: "dry-run",
  name: "an executor with dry_run_required has a passed dry run of this hash before it applies",
  reads: ["workflow", "requested", "planActionIds", "purpose", "dryRunRequired", "distrustDryRunResult", "requestedExecutor"],
  judge(f) {
    const request = requestOf(f);
    const applying = request !== undefined && isApplyMode(request.mode);
    const passed = f.workflow ? passedDryRuns(f.workflow) : [];
    const trusted = passed.find((d) => d.result_receipt !== null && f.distrustDryRunResult(d.result_receipt) === undefined);
    const distrusted = passed.map((d) => (d.result_receipt ? f.distrustDryRunResult(d.result_receipt) : "no receipt")).find(Boolean);
    return {
      ok: f.purpose === "dry-run" || !f.dryRunRequired || !applying || trusted !== undefined,
      detail:
        f.purpose === "dry-run"
          ? "this is the dry run (DRAFT_ONLY; the consent is not used)"
          : !f.dryRunRequired
            ? `${f.requestedExecutor} does not declare dry_run_required`
            : !applying
              ? `mode ${request?.mode ?? "none"} does not apply`
              : trusted
                ? `dry run of revision ${trusted.revision} passed at ${trusted.result_at} (judged by ${trusted.result_receipt?.by})`
                : distrusted
                  ? `${f.requestedExecutor} declares dry_run_required, and the passed result is not trusted: ${distrusted}`
                  : `${f.requestedExecutor} declares dry_run_required: record a dry run of revision ${frozenHandoff(f)?.revision ?? 0} and its passed result first (twinlock dry-run, then dry-run-result)`,
    };
  },
  rejudge: {
    offline: "whether the executor declares dry_run_required is in the pinned suite, not the run; CI judges each dry-run result's trust",
  },
};
