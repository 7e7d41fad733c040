import { MARKERS } from "../handoff/handoff-records.js";
import { describeState } from "../run/describe-state.js";
import { describeComparedRevision } from "./describe-compared-revision.js";
import { escapeHtml } from "./escape-html.js";
import { localHref } from "./local-href.js";
import { renderPlannerLine } from "./render-planner-words.js";
import type { RevisionPageView } from "./view-model.js";

/** How many items of each list the summary shows before it points to the whole section below. */
export const SUMMARY_ITEMS = 5;

/** A citation shown as its marker. */
function cite(id: string, marker: string): string {
  return `<code>${escapeHtml(id.startsWith(marker) ? id : `${marker}${id}`)}</code>`;
}

/** The first SUMMARY_ITEMS items as a list, and how many more there are (with where they are), or `none` when empty. */
function firstItems<T>(items: readonly T[], total: number, item: (x: T) => string, none: string, section: string): string {
  if (items.length === 0) return `<p>${none}</p>`;
  const shown = items.slice(0, SUMMARY_ITEMS);
  const more =
    total > shown.length ? `\n<p class="more"><a href="#${section}">All ${total} below</a> (${total - shown.length} more).</p>` : "";
  return `<ul class="glance-list">\n${shown.map((x) => `<li>${item(x)}</li>`).join("\n")}\n</ul>${more}`;
}

/**
 * The revision in one screen, before anything else: the facts of the
 * revision (run, executor, full hash, state, who froze it when), what the
 * planner found, what will change and where (each action's target, risk and
 * rollback, a missing one said), the open unknowns, the stops (the
 * handoff's unresolved and the run's standing), and what changed since the
 * revision compared with (the one this reviewer last decided on, else the previous). Each list shows its first few and links the whole
 * section below; each finding, action and unknown in the planner's words is
 * one marked line (renderPlannerLine), the whole in its section below.
 */
export function renderDecisionSummary(v: RevisionPageView): string {
  const e = escapeHtml;
  const m = v.model;
  const totals = v.recordsNotShown?.totals;
  const given = (x: string | null, missing: string) => (x === null ? `<strong class="missing">${missing}</strong>` : e(x));
  const findings = firstItems(
    m.findings,
    totals?.findings ?? m.findings.length,
    (f) => `${cite(f.id, MARKERS.finding)} ${renderPlannerLine(f.summary)}`,
    "No findings.",
    "findings",
  );
  const actions = firstItems(
    m.actions,
    totals?.actions ?? m.actions.length,
    (a) =>
      `${cite(a.id, MARKERS.action)} ${renderPlannerLine(a.summary)}<dl class="glance-facts"><dt>target</dt><dd>${given(a.target, "not given")}</dd><dt>risk</dt><dd>${given(a.risk, "not given")}</dd><dt>rollback</dt><dd>${given(a.rollback, "none given")}</dd></dl>`,
    "No actions: the plan changes nothing.",
    "actions",
  );
  const open = m.unknowns.filter((u) => u.status === "open");
  const unknowns = firstItems(
    open,
    open.length,
    (u) =>
      `${cite(u.id, MARKERS.unknown)} ${renderPlannerLine(u.question)}${u.owner === undefined ? "" : ` <span class="owner">(owner: ${e(u.owner)})</span>`}`,
    "No open unknowns.",
    "unknowns",
  );
  const handoffStops = m.stops.filter((s) => !s.resolved).map((s) => `<code>!STOP:${e(s.reason)}</code> in the handoff, unresolved`);
  const standing = (v.hardStops ?? [])
    .filter((s) => s.lifted === null)
    .map(
      (s) =>
        `<a href="#stop-${s.seq}">Stop ${s.seq}</a>: <code>!STOP:${e(s.reason)}</code> standing on ${s.workflow === null ? "the whole run" : "this pair"}`,
    );
  const stops = firstItems([...standing, ...handoffStops], standing.length + handoffStops.length, (x) => x, "No stops.", "stops");

  const compared = describeComparedRevision(v);
  return `<section id="summary" class="glance" aria-labelledby="summary-h">
<h2 id="summary-h">At a glance</h2>
<dl class="summary">
<dt>run</dt><dd><a href="${localHref(v.runUrl)}">${e(v.runId)}</a></dd>
<dt>executor</dt><dd><code>${e(v.executor.id)}</code> ${e(v.executor.title)}</dd>
${v.change === undefined ? "" : `<dt>for change</dt><dd><code>${e(v.change)}</code> (CI and the check judge this run on it alone)</dd>\n`}<dt>handoff hash</dt><dd><code class="hash copyable">${e(v.hash)}</code></dd>
<dt>state</dt><dd class="state state-${e(v.state)}" data-state="${e(v.state)}">${e(describeState(v.state))}</dd>
<dt>frozen</dt><dd><time datetime="${e(v.frozenAt)}">${e(v.frozenAt)}</time> by ${e(v.frozenBy)}</dd>
</dl>
<div class="glance-grid">
<div><h3>What the planner found</h3>
${findings}</div>
<div><h3>What will change, and where</h3>
${actions}</div>
<div><h3>Open unknowns</h3>
${unknowns}</div>
<div><h3>Stops</h3>
${stops}</div>
<div><h3>${compared === null ? "Since the last revision" : `Since ${compared.words}`}</h3>
${describeSinceLast(v)}</div>
</div>
</section>`;
}

/** What changed since the revision compared with, in one or two sentences with a link to the whole of it. */
function describeSinceLast(v: RevisionPageView): string {
  if (describeComparedRevision(v) === null) return "<p>This is the first revision.</p>";
  const e = escapeHtml;
  const out: string[] = [];
  if (v.requestedBy) out.push(`<p>${e(v.requestedBy.reviewer)} asked: <q class="note">${e(v.requestedBy.feedback)}</q></p>`);
  if (v.unchangedBecause !== null) out.push(`<p>Re-frozen without changes: <q class="note">${e(v.unchangedBecause)}</q></p>`);
  const changes = v.changes ?? [];
  const total = v.changesTotal ?? changes.length;
  const count = (kind: string) => changes.filter((c) => c.change === kind).length;
  const records =
    total === 0
      ? "No record changed"
      : `${total} record${total === 1 ? "" : "s"} changed (${count("added")} added, ${count("changed")} changed, ${count("removed")} removed${total > changes.length ? `, of the first ${changes.length}` : ""})`;
  const files = v.files.filter((f) => f.change !== "unchanged").length + v.removedFiles.length;
  out.push(
    `<p>${records}; ${files === 0 ? "no file changed" : `${files} file${files === 1 ? "" : "s"} changed`}. <a href="#changes">See what changed</a>.</p>`,
  );
  return out.join("\n");
}
