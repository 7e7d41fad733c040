import { describeState } from "../run/describe-state.js";
import { escapeHtml } from "./escape-html.js";
import { localHref } from "./local-href.js";
import { renderLayout } from "./render-layout.js";
import type { RunListView } from "./view-model.js";

/** The run list, `/`: each run's ID (a link to its page), suite, pairs with their states, and when it last changed. */
export function renderRunListPage(v: RunListView): string {
  const e = escapeHtml;
  const rows = v.runs.map((r) => {
    const pairs = r.pairs
      .map(
        (p) =>
          `<li><code>${e(p.planner)}</code> → <code>${e(p.executor)}</code>: <span class="state state-${e(p.state)}" data-state="${e(p.state)}">${e(describeState(p.state))}</span></li>`,
      )
      .join("");
    return `<tr><th scope="row"><a href="${localHref(r.url)}"><code>${e(r.runId)}</code></a></th><td>${e(r.suiteId)}</td><td><ul class="pairs">${pairs}</ul></td><td><time datetime="${e(r.updatedAt)}">${e(r.updatedAt)}</time></td></tr>`;
  });
  const table =
    v.runs.length === 0
      ? "<p>No runs yet. An agent creates one with <code>init-run</code> and freezes its handoff; it then shows here.</p>"
      : `<table class="runs">
<caption>Runs, most recently changed first</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Suite</th><th scope="col">Pairs and states</th><th scope="col">Updated</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>`;
  return renderLayout(v.layout, "Runs", `<h1>Runs</h1>\n${table}`);
}
