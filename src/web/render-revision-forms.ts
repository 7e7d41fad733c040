import { renderConsentForm } from "./render-consent-form.js";
import { renderDecisionForm } from "./render-decision-form.js";
import { renderVerifiedCloseForm } from "./render-verified-close-form.js";
import type { RevisionFormsView } from "./view-model.js";

/**
 * The decision panel's forms, as the revision's state allows them: approve
 * (one button), request changes (feedback, or comments on items whose fields
 * belong to this form) behind its own
 * disclosure, decline (a reason required) behind its own, styled as
 * destructive; or the consent question behind a disclosure. Each carries
 * the hash shown; review forms post `decision` and `feedback`. Null when no
 * form is allowed; on an executing pair, the verified close behind its own
 * disclosure. `actionSummaries` names each action ID the consent scope offers.
 */
export function renderRevisionForms(
  forms: RevisionFormsView,
  csrf: string,
  hash: string,
  executorDigest: string,
  actionSummaries: ReadonlyMap<string, string> = new Map(),
): string | null {
  // Every decision also names the executor file it showed: a file changed since the page was rendered is refused.
  const shown: Array<[string, string]> = [["executor_digest", executorDigest]];
  const out: string[] = [];
  if (forms.approve !== undefined)
    out.push(`<div class="decision-option decision-approve">
<p class="decision-help">Approving records that this exact revision, and nothing else, may go on to the consent question.</p>
${renderDecisionForm({ id: "form-approve", action: forms.approve, csrf, hash, hidden: [["decision", "approved"], ...shown], submit: "Sign and approve this revision" })}
</div>`);
  if (forms.requestChanges !== undefined)
    out.push(`<details class="decision-option decision-changes" id="request-changes">
<summary>Request changes</summary>
${renderDecisionForm({
  id: "form-request-changes",
  action: forms.requestChanges,
  csrf,
  hash,
  hidden: [["decision", "changes_requested"], ...shown],
  fields: `<label for="feedback-changes">What should change (required unless you comment on items or file lines below)</label>
<textarea id="feedback-changes" name="feedback" rows="5" data-required-unless-comments></textarea>
`,
  submit: "Sign and request changes",
})}
</details>`);
  if (forms.decline !== undefined)
    out.push(`<details class="decision-option decision-destructive" id="decline">
<summary>Decline the plan</summary>
<p class="decision-help">Declining ends this workflow: nothing of this plan runs, and the planner cannot revise it.</p>
${renderDecisionForm({
  id: "form-decline",
  action: forms.decline,
  csrf,
  hash,
  hidden: [["decision", "declined"], ...shown],
  fields: `<label for="feedback-decline">Why the plan is declined (required)</label>
<textarea id="feedback-decline" name="feedback" rows="4" required></textarea>
`,
  submit: "Sign and decline the plan",
  destructive: true,
})}
</details>`);
  if (forms.consent !== undefined)
    out.push(`<details class="decision-option decision-consent" id="consent">
<summary>Answer the consent question</summary>
${renderConsentForm(forms.consent, csrf, hash, executorDigest, actionSummaries)}
</details>`);
  if (forms.verifiedClose !== undefined) out.push(renderVerifiedCloseForm(forms.verifiedClose, csrf, hash));
  return out.length === 0 ? null : out.join("\n");
}
