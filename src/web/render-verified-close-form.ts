import { escapeHtml } from "./escape-html.js";
import { renderDecisionForm } from "./render-decision-form.js";
import type { RevisionFormsView } from "./view-model.js";

/**
 * The verified close behind its own disclosure: the executed change the
 * person checked (`changed_files`, one file a line as `sha256sum` prints it,
 * or `deleted PATH`) and, for each acceptance criterion of the plan, its
 * result (`criterion-result:ID`) and the command that showed it
 * (`criterion-command:ID`; empty: no evidence). Signed with the passkey;
 * the gate refuses it without the `verify` right or on a change that does
 * not conform to the admitted plan.
 */
export function renderVerifiedCloseForm(form: NonNullable<RevisionFormsView["verifiedClose"]>, csrf: string, hash: string): string {
  const e = escapeHtml;
  const criteria = form.criteria
    .map(
      (id, i) => `<fieldset class="criterion-result">
<legend>Criterion <code>${e(id)}</code></legend>
<label for="verify-result-${i}">Result</label>
<select id="verify-result-${i}" name="criterion-result:${e(id)}"><option value="passed">passed</option><option value="failed">failed</option></select>
<label for="verify-command-${i}">The command that showed it (empty: no evidence)</label>
<input type="text" id="verify-command-${i}" name="criterion-command:${e(id)}" autocomplete="off">
</fieldset>`,
    )
    .join("\n");
  return `<details class="decision-option decision-verify" id="verified-close">
<summary>Close as verified</summary>
<p class="decision-help">A verified close is your signed word that the executed change is the approved plan's: it needs the verify right, and a change outside the plan is refused.</p>
${renderDecisionForm({
  id: "form-verified-close",
  action: form.action,
  csrf,
  hash,
  fields: `<label for="verify-changed-files">Changed files, one a line as sha256sum prints them (<code>git diff --name-only BASE...HEAD | xargs sha256sum</code>), a deleted one as <code>deleted PATH</code></label>
<textarea id="verify-changed-files" name="changed_files" rows="4" required spellcheck="false"></textarea>
${criteria}
`,
  submit: "Sign and close as verified",
})}
</details>`;
}
