import { escapeHtml } from "./escape-html.js";
import { renderDecisionForm } from "./render-decision-form.js";
import { renderPlannerLine, renderPlannerWhole } from "./render-planner-words.js";
import type { ConsentFormView } from "./view-model.js";

/**
 * The consent form, short enough for a phone's bottom bar: the question in
 * one line (the executor's ID and title, the revision) as the legend of a
 * yes/no choice, the whole question exactly as the library words it one
 * click away; then the limits consented to, collapsed to one line saying
 * them and defaulting to the run's settings: mode, environment, action
 * scope ("all" or action IDs), budget and an expiry in minutes. A closed
 * disclosure's fields are sent all the same, so the settings shown are the
 * ones the consent binds.
 * Each action is named by its ID and, when given, its summary as the
 * planner's words on one marked line (renderPlannerLine), the whole text
 * in a disclosure beside the label.
 * Fields: `decision` (approved|declined), `mode`, `environment`, `actions`
 * (repeated; `all` or IDs), `budget` (empty for none), `expires_in_minutes`
 * (empty for none).
 */
export function renderConsentForm(
  form: ConsentFormView,
  csrf: string,
  hash: string,
  executorDigest: string,
  actionSummaries: ReadonlyMap<string, string> = new Map(),
): string {
  const e = escapeHtml;
  const s = form.settings;
  const all = s.actions === "all";
  const chosen = new Set(all ? [] : s.actions);
  const modes = form.modes.map((m) => `<option value="${e(m)}"${m === s.mode ? " selected" : ""}>${e(m)}</option>`).join("");
  const actions = form.actionIds
    .map(
      (id, i) =>
        `<div class="check"><input type="checkbox" id="consent-action-${i}" name="actions" value="${e(id)}"${chosen.has(id) ? " checked" : ""}><label for="consent-action-${i}"><code>${e(id)}</code>${summaryOf(id, actionSummaries, "line")}</label>${summaryOf(id, actionSummaries, "whole")}</div>`,
    )
    .join("\n");
  const scope = s.actions === "all" ? "all the plan's actions" : `actions ${s.actions.join(", ") || "none"}`;
  const limitsLine = `mode ${s.mode}, environment ${s.environment}, ${scope}, ${s.budget === null ? "no budget" : `budget ${s.budget}`}`;
  const fields = `<fieldset class="consent-question">
<legend>${e(form.summary)}</legend>
<details class="consent-question-whole" id="consent-question-whole"><summary>The whole question, as it is signed</summary>
<p>${e(form.question)}</p>
</details>
<div class="check"><input type="radio" id="consent-yes" name="decision" value="approved" required><label for="consent-yes">Yes, consent</label></div>
<div class="check"><input type="radio" id="consent-no" name="decision" value="declined" required><label for="consent-no">No, refuse</label></div>
</fieldset>
<details class="consent-limits" id="consent-limits"><summary>Limits: ${e(limitsLine)}</summary>
<fieldset>
<legend>Limits of the consent</legend>
<label for="consent-mode">Mode</label>
<select id="consent-mode" name="mode" required>${modes}</select>
<label for="consent-environment">Environment</label>
<input type="text" id="consent-environment" name="environment" value="${e(s.environment)}" required>
<fieldset class="scope">
<legend>Actions in scope</legend>
<div class="check"><input type="checkbox" id="consent-action-all" name="actions" value="all"${all ? " checked" : ""}><label for="consent-action-all">All the plan's actions</label></div>
${actions}
</fieldset>
<label for="consent-budget">Budget (admissions; leave empty for none)</label>
<input type="number" id="consent-budget" name="budget" min="0" step="1" inputmode="numeric"${s.budget === null ? "" : ` value="${s.budget}"`}>
<label for="consent-expiry">Expires in minutes (leave empty for the suite's default lifetime)</label>
<input type="number" id="consent-expiry" name="expires_in_minutes" min="1" step="1" inputmode="numeric">
</fieldset>
</details>
`;
  return renderDecisionForm({
    id: "form-consent",
    action: form.action,
    csrf,
    hash,
    hidden: [["executor_digest", executorDigest]],
    fields,
    submit: "Sign and send the consent answer",
  });
}

function summaryOf(id: string, summaries: ReadonlyMap<string, string>, part: "line" | "whole"): string {
  const summary = summaries.get(id);
  if (summary === undefined) return "";
  return part === "line" ? ` ${renderPlannerLine(summary)}` : renderPlannerWhole(summary);
}
