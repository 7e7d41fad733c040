import { renderConsentForm } from "./render-consent-form.js";
import { renderDecisionForm } from "./render-decision-form.js";
import type { RevisionFormsView } from "./view-model.js";

/**
 * The decision forms a revision's state allows, each under its own `<h3>`:
 * request changes (feedback required), approve, decline (a reason
 * required), consent. Each carries the hash shown; review forms post
 * `decision` and `feedback`. Null when no form is allowed.
 */
export function renderRevisionForms(forms: RevisionFormsView, csrf: string, hash: string, executorDigest: string): string | null {
  // Every decision also names the executor file it showed: a file changed since the page was rendered is refused.
  const shown: Array<[string, string]> = [["executor_digest", executorDigest]];
  const out: string[] = [];
  if (forms.requestChanges !== undefined)
    out.push(`<h3>Request changes</h3>
${renderDecisionForm({
  id: "form-request-changes",
  action: forms.requestChanges,
  csrf,
  hash,
  hidden: [["decision", "changes_requested"], ...shown],
  fields: `<label for="feedback-changes">What should change (required)</label>
<textarea id="feedback-changes" name="feedback" rows="5" required></textarea>
`,
  submit: "Sign and request changes",
})}`);
  if (forms.approve !== undefined)
    out.push(`<h3>Approve</h3>
<p>Approving records that this exact revision, and nothing else, may go on to the consent question.</p>
${renderDecisionForm({ id: "form-approve", action: forms.approve, csrf, hash, hidden: [["decision", "approved"], ...shown], submit: "Sign and approve this revision" })}`);
  if (forms.decline !== undefined)
    out.push(`<h3>Decline</h3>
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
})}`);
  if (forms.consent !== undefined) out.push(`<h3>Execution consent</h3>\n${renderConsentForm(forms.consent, csrf, hash, executorDigest)}`);
  return out.length === 0 ? null : out.join("\n");
}
