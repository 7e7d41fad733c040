import { describeState } from "../run/describe-state.js";
import { describeNextStep } from "./describe-next-step.js";
import { escapeHtml } from "./escape-html.js";
import { localHref } from "./local-href.js";
import { renderDecisionForm } from "./render-decision-form.js";
import { renderLayout } from "./render-layout.js";
import { renderStop } from "./render-stop.js";
import type { RunPageView } from "./view-model.js";

/**
 * The run page, `/runs/{runId}`: its settings; each pair with its state, its
 * next step in words and a link to its current revision; the hard stops,
 * standing and lifted, with a form to lift each standing one and a form to
 * raise a new one (fields `reason`, `workflow` ("" for the whole run), `note`).
 */
export function renderRunPage(v: RunPageView): string {
  const e = escapeHtml;
  const s = v.settings;
  const settings = `<dl class="summary">
<dt>suite</dt><dd>${e(v.suiteId)}</dd>
<dt>mode</dt><dd>${e(s.mode)}</dd>
<dt>environment</dt><dd>${e(s.environment)}</dd>
<dt>actions</dt><dd>${s.actions === "all" ? "all the plan's actions" : s.actions.map((a) => `<code>${e(a)}</code>`).join(", ") || "none"}</dd>
<dt>budget</dt><dd>${s.budget === null ? "no limit" : `${s.budget} per admission`}</dd>
</dl>`;
  const pairs = v.pairs.map((p) => {
    const link =
      p.revisionUrl === null
        ? "<p>Nothing frozen yet.</p>"
        : `<p><a href="${localHref(p.revisionUrl)}">Review revision ${p.revision} of ${e(p.planner)}</a></p>`;
    return `<article class="pair"><h3><code>${e(p.planner)}</code> → <code>${e(p.executor)}</code> ${e(p.executorTitle)}</h3>
<dl>
<dt>state</dt><dd class="state state-${e(p.state)}" data-state="${e(p.state)}">${e(describeState(p.state))}</dd>
<dt>revision</dt><dd>${p.revision}</dd>
${p.hash === null ? "" : `<dt>hash</dt><dd><code class="hash">${e(p.hash)}</code></dd>\n`}<dt>next step</dt><dd>${e(describeNextStep(p.next))}</dd>
</dl>
${link}</article>`;
  });
  const stops =
    v.stops.length === 0
      ? "<p>No stops raised.</p>"
      : `<ul class="stops">\n${v.stops.map((x, i) => renderStop(x, i, v.layout.csrf)).join("\n")}\n</ul>`;
  const options = [
    `<option value="">the whole run</option>`,
    ...v.pairs.map((p) => `<option value="${e(p.planner)}">${e(p.planner)}</option>`),
  ].join("");
  const raise =
    v.stopAction === null
      ? ""
      : `\n<details class="decision-option decision-destructive" id="raise-stop">
<summary>Raise a stop</summary>
<p>A stop halts admission until someone with the stop right lifts it.</p>
${renderDecisionForm({
  id: "form-stop",
  action: v.stopAction,
  csrf: v.layout.csrf,
  hash: null,
  fields: `<label for="stop-reason">Reason (lower-case letters, digits and dashes, e.g. <code>data-loss-risk</code>)</label>
<input type="text" id="stop-reason" name="reason" required pattern="[a-z0-9][a-z0-9\\-]{0,119}" autocomplete="off">
<label for="stop-workflow">Stops</label>
<select id="stop-workflow" name="workflow">${options}</select>
<label for="stop-note">Note (optional)</label>
<textarea id="stop-note" name="note" rows="3"></textarea>
`,
  submit: "Sign and raise the stop",
  destructive: true,
})}
</details>`;
  const body = `<h1>Run <code>${e(v.runId)}</code></h1>
<section id="settings" aria-labelledby="settings-h"><h2 id="settings-h">Settings</h2>
${settings}
</section>
<section id="pairs" aria-labelledby="pairs-h"><h2 id="pairs-h">Pairs (${v.pairs.length})</h2>
${pairs.join("\n")}
</section>
<section id="stops" aria-labelledby="stops-h"><h2 id="stops-h">Stops</h2>
${stops}${raise}
</section>`;
  return renderLayout(v.layout, `Run ${v.runId}`, body);
}
