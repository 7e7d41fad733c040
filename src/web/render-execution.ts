import { MARKERS } from "../handoff/handoff-records.js";
import { escapeHtml } from "./escape-html.js";
import type { ExecutionView } from "./view-model.js";

/** A deviation said in words with a ✗ beside it, so it never rests on colour alone. */
function deviation(words: string): string {
  return `<strong class="mark mark-bad deviation"><span aria-hidden="true">✗</span> ${escapeHtml(words)}</strong>`;
}

/** What held, in words with a ✓ beside it. */
function held(words: string): string {
  return `<span class="mark mark-ok"><span aria-hidden="true">✓</span> ${escapeHtml(words)}</span>`;
}

/** How many deviations the page shows: actions not done, files outside the plan, criteria without evidence or failed. */
export function countDeviations(v: ExecutionView): number {
  return (
    v.actions.filter((a) => !a.done).length +
    v.changedFiles.filter((f) => f.outsidePlan).length +
    v.criteria.filter((c) => c.results.length === 0 || c.results.some((r) => r.result === "failed")).length
  );
}

/**
 * The plan beside what was done, as `close` recorded it: each action done or
 * "not done", each changed file with its digest and "outside the plan" when
 * it is, each criterion with its recorded results or "no evidence"; a count
 * of deviations first. Every deviation is said in words and marked ✗.
 */
export function renderExecution(v: ExecutionView): string {
  const e = escapeHtml;
  const n = countDeviations(v);
  const summary =
    n === 0
      ? `<p class="execution-summary">${held("The executed change conforms to the approved plan.")}</p>`
      : `<p class="execution-summary" role="note">${deviation(`${n} deviation${n === 1 ? "" : "s"} from the approved plan.`)}</p>`;
  const closed = `<p>Closed <strong>${e(v.outcome)}</strong> by ${e(v.closedBy)} at <time datetime="${e(v.closedAt)}">${e(v.closedAt)}</time>.</p>`;
  const actions = `<table class="execution-actions">
<caption>Actions of the plan</caption>
<thead><tr><th scope="col">action</th><th scope="col">target</th><th scope="col">done</th></tr></thead>
<tbody>
${v.actions
  .map(
    (a) =>
      `<tr${a.done ? "" : ` class="deviation-row"`}><th scope="row"><code>${e(MARKERS.action + a.id)}</code></th><td>${a.target === null ? "(not given)" : `<code>${e(a.target)}</code>`}</td><td>${a.done ? held("done") : deviation("not done")}</td></tr>`,
  )
  .join("\n")}
</tbody>
</table>`;
  const files =
    v.changedFiles.length === 0
      ? "<p>No changed files were recorded.</p>"
      : `<ul class="execution-files">
${v.changedFiles
  .map(
    (f) =>
      `<li${f.outsidePlan ? ` class="deviation-row"` : ""}><code>${e(f.path)}</code> ${f.sha256 === null ? "deleted" : `<code class="hash">${e(f.sha256)}</code>`} ${f.outsidePlan ? deviation("outside the plan") : held("inside the plan")}</li>`,
  )
  .join("\n")}
</ul>`;
  const criteria = `<table class="execution-criteria">
<caption>Acceptance criteria</caption>
<thead><tr><th scope="col">criterion</th><th scope="col">result</th><th scope="col">command</th></tr></thead>
<tbody>
${v.criteria
  .flatMap((c) => {
    const id = `<th scope="row"><code>${e(MARKERS.criterion + c.id)}</code></th>`;
    if (c.results.length === 0) return [`<tr class="deviation-row">${id}<td>${deviation("no evidence")}</td><td></td></tr>`];
    return c.results.map(
      (r) =>
        `<tr${r.result === "failed" ? ` class="deviation-row"` : ""}>${id}<td>${r.result === "passed" ? held("passed") : deviation("failed")}</td><td><code>${e(r.command)}</code></td></tr>`,
    );
  })
  .join("\n")}
</tbody>
</table>`;
  return `${summary}\n${closed}\n${actions}\n<h3>Changed files (${v.changedFiles.length})</h3>\n${files}\n${criteria}`;
}
