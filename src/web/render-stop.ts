import { escapeHtml } from "./escape-html.js";
import { renderDecisionForm } from "./render-decision-form.js";
import type { StopView } from "./view-model.js";

/** One stop as a list item: who raised it and when, lifted or standing, and a standing one's own lift form (naming it alone). */
export function renderStop(s: StopView, i: number, csrf: string): string {
  const e = escapeHtml;
  const scope = s.workflow === null ? "the whole run" : `<code>${e(s.workflow)}</code>`;
  const note = s.note === null ? "" : ` <span class="note">${e(s.note)}</span>`;
  const state =
    s.lifted === null
      ? `<strong>standing</strong>`
      : `lifted by ${e(s.lifted.by)} at <time datetime="${e(s.lifted.at)}">${e(s.lifted.at)}</time>: <span class="note">${e(s.lifted.resolution)}</span>`;
  const lift =
    s.lifted === null && s.liftAction !== null
      ? `\n${renderDecisionForm({
          id: `form-lift-${i}`,
          action: s.liftAction,
          csrf,
          hash: null,
          // This stop alone, by its number: the signed receipt names it, and lifts no other stop of its reason.
          hidden: [
            ["reason", s.reason],
            ["workflow", s.workflow ?? ""],
            ["stops", String(s.seq)],
          ],
          fields: `<label for="lift-resolution-${i}">Why the stop can be lifted (required)</label>
<textarea id="lift-resolution-${i}" name="resolution" rows="3" required></textarea>
`,
          submit: `Sign and lift stop ${s.seq} (${s.reason})`,
        })}`
      : "";
  return `<li class="stop${s.lifted === null ? " stop-standing" : ""}" id="stop-${s.seq}"><p>Stop ${s.seq}: <code>!STOP:${e(s.reason)}</code> on ${scope}, raised by ${e(s.raisedBy)} at <time datetime="${e(s.raisedAt)}">${e(s.raisedAt)}</time>.${note} ${state}</p>${lift}</li>`;
}
