import { describeState } from "../run/describe-state.js";
import { STATES, type State } from "../run/transition-table.js";
import { describeRelativeTime } from "./describe-relative-time.js";
import { escapeHtml } from "./escape-html.js";
import { localHref } from "./local-href.js";
import { renderLayout } from "./render-layout.js";
import type { PairSummaryView, RunListView, RunSummaryView } from "./view-model.js";

/** The right a person needs to take a pair on from each state that waits on a person; other states wait on an agent or on nothing. */
export const WAITS_ON_RIGHT: Partial<Record<State, string>> = {
  plan_review_pending: "review",
  execution_consent_pending: "consent",
  approval_pending: "apply",
};

/** The pairs of a run that wait on a reviewer with `rights`. */
export function pairsWaitingOn(run: RunSummaryView, rights: readonly string[]): PairSummaryView[] {
  return run.pairs.filter((p) => {
    const right = WAITS_ON_RIGHT[p.state];
    return right !== undefined && rights.includes(right);
  });
}

/** A run's title: what its pairs' executors are for, the first two by title and how many more. */
export function runTitle(run: RunSummaryView): string {
  const titles = [...new Set(run.pairs.map((p) => p.executorTitle))];
  if (titles.length === 0) return "No pairs yet";
  return titles.length <= 2 ? titles.join("; ") : `${titles.slice(0, 2).join("; ")} and ${titles.length - 2} more`;
}

/**
 * The run list, `/`: first the runs with a pair waiting on this reviewer (by
 * the pair's state and the reviewer's rights), then the others, each newest
 * first. Each run by its title (its executors' titles) linking to its page,
 * with its ID, suite, pairs with their states (a pair waiting on you marked
 * in words), and when it last changed, relative with the exact time as a title.
 * Above them, the filters by state and suite (renderFilters): both sections
 * list only the runs the server kept, waiting on you still first.
 */
export function renderRunListPage(v: RunListView): string {
  const rights = v.rights ?? [];
  const waiting = v.runs.filter((r) => pairsWaitingOn(r, rights).length > 0);
  const others = v.runs.filter((r) => pairsWaitingOn(r, rights).length === 0);
  if ((v.total ?? v.runs.length) === 0)
    return renderLayout(
      v.layout,
      "Runs",
      "<h1>Runs</h1>\n<p>No runs yet. An agent creates one with <code>init-run</code> and freezes its handoff; it then shows here.</p>",
    );
  const filters = renderFilters(v);
  if (v.runs.length === 0) return renderLayout(v.layout, "Runs", `<h1>Runs</h1>\n${filters}`);
  const waitingPart =
    waiting.length === 0
      ? `<section id="waiting" aria-labelledby="waiting-h"><h2 id="waiting-h">Waiting on you (0)</h2>\n<p>Nothing waits on you now.</p>\n</section>`
      : `<section id="waiting" aria-labelledby="waiting-h"><h2 id="waiting-h">Waiting on you (${waiting.length})</h2>\n${renderTable(waiting, "Runs with a pair waiting on your decision, most recently changed first", v)}\n</section>`;
  const othersPart =
    others.length === 0
      ? ""
      : `\n<section id="other-runs" aria-labelledby="other-runs-h"><h2 id="other-runs-h">Other runs (${others.length})</h2>\n${renderTable(others, "Other runs, most recently changed first", v)}\n</section>`;
  return renderLayout(v.layout, "Runs", `<h1>Runs</h1>\n${filters}${waitingPart}${othersPart}`);
}

/**
 * The filters as a plain GET form (it works without the script): a labelled
 * choice of state and of suite, each defaulting to any, the ones applied
 * selected; then, when a filter is applied, how many runs are shown of how
 * many and a link back to every run.
 */
function renderFilters(v: RunListView): string {
  const e = escapeHtml;
  const f = v.filters ?? { state: null, suite: null };
  const suites = [...new Set([...(v.suites ?? v.runs.map((r) => r.suiteId)), ...(f.suite === null ? [] : [f.suite])])];
  const option = (value: string, label: string, chosen: boolean) =>
    `<option value="${e(value)}"${chosen ? " selected" : ""}>${e(label)}</option>`;
  const states = [option("", "Any state", f.state === null), ...STATES.map((s) => option(s, describeState(s), s === f.state))];
  const suiteOptions = [option("", "Any suite", f.suite === null), ...suites.map((s) => option(s, s, s === f.suite))];
  const applied = [
    ...(f.state === null ? [] : [`with a pair ${describeState(f.state)}`]),
    ...(f.suite === null ? [] : [`of the suite ${f.suite}`]),
  ];
  const total = v.total ?? v.runs.length;
  const result =
    applied.length === 0
      ? ""
      : `\n<p class="filter-result" role="status">${v.runs.length === 0 ? "No run" : `${v.runs.length} of ${total} run${total === 1 ? "" : "s"}`} ${v.runs.length === 1 || v.runs.length === 0 ? "is" : "are"} shown: ${e(applied.join(", "))}. <a href="/">Show every run</a></p>`;
  return `<form class="run-filters" method="get" action="/" role="search" aria-label="Filter the runs">
<div class="filter"><label for="filter-state">State</label>
<select id="filter-state" name="state">${states.join("")}</select></div>
<div class="filter"><label for="filter-suite">Suite</label>
<select id="filter-suite" name="suite">${suiteOptions.join("")}</select></div>
<button type="submit">Filter the runs</button>
</form>${result}
`;
}

function renderTable(runs: readonly RunSummaryView[], caption: string, v: RunListView): string {
  const e = escapeHtml;
  const rights = v.rights ?? [];
  const rows = runs.map((r) => {
    const mine = new Set(pairsWaitingOn(r, rights).map((p) => p.planner));
    const pairs = r.pairs
      .map(
        (p) =>
          `<li><code>${e(p.planner)}</code> → <code>${e(p.executor)}</code>: <span class="state state-${e(p.state)}" data-state="${e(p.state)}">${e(describeState(p.state))}</span>${mine.has(p.planner) ? ` <strong class="waits-on-you">waits on you</strong>` : ""}</li>`,
      )
      .join("");
    const when = v.now === undefined ? r.updatedAt : describeRelativeTime(r.updatedAt, v.now);
    return `<tr><th scope="row"><a href="${localHref(r.url)}">${e(runTitle(r))}</a> <code class="run-id">${e(r.runId)}</code></th><td>${e(r.suiteId)}</td><td><ul class="pairs">${pairs}</ul></td><td><time datetime="${e(r.updatedAt)}" title="${e(r.updatedAt)}">${e(when)}</time></td></tr>`;
  });
  return `<table class="runs">
<caption>${e(caption)}</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Suite</th><th scope="col">Pairs and states</th><th scope="col">Updated</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>`;
}
