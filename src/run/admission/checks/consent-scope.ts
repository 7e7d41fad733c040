import { receiptHash } from "../../receipt-hash.js";
import { type AdmissionCheckModule, type AdmissionFacts, latestConsent, requestOf } from "../admission-facts.js";

/** What of the request lies outside the granted consent (mode, environment, actions, budget, expiry, use, apply approval). */
function scopeProblems(f: AdmissionFacts): string[] {
  const consent = latestConsent(f);
  const request = requestOf(f);
  if (consent?.decision !== "approved" || !request) return ["no granted consent"];
  const scope: string[] = [];
  const dryRunOfConsent = f.purpose === "dry-run" && request.mode === "DRAFT_ONLY";
  if (request.mode !== consent.mode && !dryRunOfConsent) scope.push(`mode ${request.mode} is not the consented ${consent.mode}`);
  // Checked at init-run too; judged again here against the executor file as pinned now.
  if (f.executorModes && f.executorModes.length > 0 && !f.executorModes.includes(request.mode))
    scope.push(`mode ${request.mode} is not one of ${f.requestedExecutor}'s allowed_modes (${f.executorModes.join(", ")})`);
  if (request.environment !== consent.environment)
    scope.push(`environment ${request.environment} is not the consented ${consent.environment}`);
  const notInPlan = request.actions.filter((a) => !f.planActionIds.includes(a));
  if (notInPlan.length) scope.push(`actions ${notInPlan.map((a) => `+ACTION:${a}`).join(", ")} are not in the frozen plan`);
  if (consent.actions !== "all") {
    const outside = request.actions.filter((a) => !(consent.actions as string[]).includes(a));
    if (outside.length) scope.push(`actions ${outside.join(", ")} are outside the consented scope ${consent.actions.join(", ")}`);
  }
  if (request.actions.length === 0) scope.push("no action requested");
  if (consent.budget !== null && request.actions.length > consent.budget)
    scope.push(`${request.actions.length} actions exceed the budget of ${consent.budget}`);
  if (consent.expires_at !== null && f.now.getTime() >= Date.parse(consent.expires_at))
    scope.push(`the consent expired at ${consent.expires_at}`);
  if (consent.consumed_at !== null) scope.push(`the consent was already used by an admission at ${consent.consumed_at}`);
  if (consent.mode === "APPLY_APPROVED") {
    const approval = f.workflow?.apply_approvals.filter((a) => a.consent_hash === receiptHash(consent)).pop();
    if (!approval) scope.push("APPLY_APPROVED needs its apply approval (twinlock approve-apply)");
  }
  return scope;
}

/** Check 7: the request lies within the consent (its mode, allowed by the executor; environment, actions, budget), unexpired, with its apply approval. */
export const consentScope: AdmissionCheckModule = {
  id: "7",
  name: "mode (the consented one, allowed by the executor), environment, actions and budget within the consent; not expired; apply approval present",
  reads: ["workflow", "requested", "planActionIds", "purpose", "executorModes", "requestedExecutor", "now"],
  judge(f) {
    const scope = scopeProblems(f);
    const request = requestOf(f);
    const consent = latestConsent(f);
    return {
      ok: scope.length === 0,
      detail:
        scope.length === 0 && request
          ? `mode ${request.mode}, environment ${request.environment}, actions ${request.actions.join(",")}, budget ${request.budget ?? "unlimited"}${consent?.expires_at ? `, expires ${consent.expires_at}` : ""}`
          : scope.join("; "),
    };
  },
  // Offline: the consent unexpired at the admission's time, and an APPLY_APPROVED consent's apply approval recorded before it.
  rejudge: ({ workflow, receipt, consent, when }) => [
    ...(consent && consent.expires_at !== null && when >= Date.parse(consent.expires_at)
      ? [`the consent expired at ${consent.expires_at}, before the admission at ${new Date(when).toISOString()}`]
      : []),
    ...(consent?.mode === "APPLY_APPROVED" && !workflow.apply_approvals.some((a) => a.consent_hash === receipt.consent_hash)
      ? ["APPLY_APPROVED without its apply approval"]
      : []),
  ],
};
