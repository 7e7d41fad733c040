import { describeNotWhole } from "../gate/present-files.js";
import { describeState } from "../run/describe-state.js";
import { describeComparedRevision } from "./describe-compared-revision.js";
import { escapeHtml } from "./escape-html.js";
import { localHref } from "./local-href.js";
import { renderAgentDocuments } from "./render-agent-documents.js";
import { renderConfirmation } from "./render-confirmation.js";
import { renderDecisionSummary } from "./render-decision-summary.js";
import { renderExecution } from "./render-execution.js";
import { renderHandoffRecords } from "./render-handoff-records.js";
import { renderHashedFiles } from "./render-hashed-files.js";
import { renderLayout } from "./render-layout.js";
import { renderReceipts } from "./render-receipts.js";
import { renderRecordChanges } from "./render-record-changes.js";
import { renderRevisionForms } from "./render-revision-forms.js";
import { renderStop } from "./render-stop.js";
import type { RevisionPageView } from "./view-model.js";

/** An executor body longer than this many lines is shown collapsed (one click opens it). */
const LONG_LINES = 40;

/**
 * The revision page (SPEC §10), from the frozen bytes, leading with the
 * decision: the heading (planner → executor, revision n of m), a one-screen
 * summary (renderDecisionSummary) and the decision panel the state allows
 * (sticky beside the page on a desktop, a bar at the bottom on a phone; on a
 * stale revision a banner links the current one instead); then an "on this
 * page" list and the rest: the stops on the pair, the plan versus what was
 * done once `close` recorded it, what changed since the revision compared with (the one this reviewer last decided on, else n-1), the records,
 * `report.md` rendered inert, the exact executor (rendered once, the whole
 * file one click away), every hashed file, the receipts and the revisions,
 * the long ones collapsed.
 */
export function renderRevisionPage(v: RevisionPageView): string {
  const e = escapeHtml;
  const rendered = v.rendered ?? renderAgentDocuments({ executorBody: v.executor.body, report: v.report });
  const compared = describeComparedRevision(v);
  const previous = compared?.revision ?? null;
  const stale = v.stale
    ? `<p class="banner banner-stale" role="alert">This revision is no longer current — see <a href="${localHref(v.stale.url)}">revision ${v.stale.revision}</a>.</p>\n`
    : "";
  const summaries = new Map(v.model.actions.map((a) => [a.id, a.summary]));
  const forms = v.stale ? null : renderRevisionForms(v.forms, v.layout.csrf, v.hash, v.executor.digest, summaries);
  const sections: Array<[id: string, title: string, html: string]> = [];

  const changed: string[] = [];
  if (v.requestedBy)
    changed.push(
      `<p>Changes requested by ${e(v.requestedBy.reviewer)}:</p>\n<blockquote class="note">${e(v.requestedBy.feedback)}</blockquote>`,
    );
  if (v.previousComments && v.previousComments.length > 0)
    changed.push(`<p>Comments on revision ${previous}, and whether the item each names changed in this revision:</p>
<ul class="comment-changes">
${v.previousComments.map((c) => `<li><span class="change-kind change-${e(c.change)}">${e(c.change)}</span> ${renderCommentItem(c)}</li>`).join("\n")}
</ul>`);
  if (v.unchangedBecause !== null)
    changed.push(`<p>Re-frozen without changes. The planner says why:</p>\n<blockquote class="note">${e(v.unchangedBecause)}</blockquote>`);
  if (v.changes !== null) changed.push(renderRecordChanges(v.changes, v.changesTotal));
  if (compared !== null) sections.push(["changes", `What changed since ${compared.words}`, changed.join("\n")]);
  if (v.execution) sections.unshift(["execution", "Plan versus execution", renderExecution(v.execution)]);
  if (v.hardStops && v.hardStops.length > 0)
    sections.unshift([
      "hard-stops",
      "Hard stops on this pair",
      `<ul class="stops">\n${v.hardStops.map((x, i) => renderStop(x, i, v.layout.csrf)).join("\n")}\n</ul>`,
    ]);

  // Records not all shown are said to be before any of them and again in the panel: the decision binds all of them.
  const notShown = v.recordsNotShown
    ? `<p class="banner banner-partial" role="note"><strong>Not the whole plan.</strong> ${e(v.recordsNotShown.notice)}</p>\n`
    : "";
  // The comment controls belong to the request-changes form, so they are shown only where that form is.
  const commentForm = forms !== null && v.forms.requestChanges !== undefined ? "form-request-changes" : undefined;
  const requested =
    v.requestedComments && v.requestedComments.length > 0
      ? `<section id="requested-comments" aria-labelledby="requested-comments-h"><h2 id="requested-comments-h">Changes requested on this revision, by item</h2>
<ul class="comments">
${v.requestedComments.map((c) => `<li>${renderCommentItem(c)}</li>`).join("\n")}
</ul>
</section>\n`
      : "";
  const records = requested + notShown + renderHandoffRecords(v.model, v.recordsNotShown ?? undefined, commentForm);
  const filesNotListed = v.filesNotListed
    ? `<p class="banner banner-partial" role="note"><strong>Not every file is listed.</strong> ${e(v.filesNotListed.notice)}</p>\n`
    : "";
  // A report.md over the budget of what is shown is said to be a part (or not shown), never taken for the whole or for none.
  const reportFile = v.files.find((f) => f.path === "report.md");
  const reportPart = reportFile ? describeNotWhole(reportFile) : null;
  const report =
    (reportPart === null ? "" : `<p class="banner banner-partial" role="note">${e(reportPart)}</p>\n`) +
    (rendered.report !== null
      ? rendered.report
      : reportFile
        ? "<p>The report is not shown as text here; see it under Files.</p>"
        : "<p>This handoff has no <code>report.md</code>.</p>");
  const lines = v.executor.body.split("\n").length;
  const prompt = rendered.executor;
  const executor = `<dl>
<dt>ID</dt><dd><code>${e(v.executor.id)}</code></dd>
<dt>title</dt><dd>${e(v.executor.title)}</dd>
<dt>file digest</dt><dd><code class="hash">${e(v.executor.digest)}</code></dd>
</dl>
${lines > LONG_LINES ? `<details class="long" id="executor-text"><summary>The executor's instructions, rendered (${lines} lines)</summary>\n${prompt}\n</details>` : prompt}
<details class="long" id="executor-file"><summary>The whole file, exactly as the executor receives it</summary>
<p>The rendering above can hide text such as link definitions; this is every character of the file.</p>
<pre class="file-text" tabindex="0">${e(v.executor.source)}</pre>
</details>`;
  const revisions = `<ol class="revisions">\n${v.revisions
    .map(
      (r) =>
        `<li><a href="${localHref(r.url)}"${r.revision === v.revision ? ` aria-current="page"` : ""}>Revision ${r.revision}</a> <time datetime="${e(r.frozenAt)}">${e(r.frozenAt)}</time> <code class="hash">${e(r.hash)}</code></li>`,
    )
    .join("\n")}\n</ol>`;

  const nav = [
    ["summary", "At a glance"],
    ["decide", "Decide"],
    ...sections.map(([id, title]) => [id, title]),
    ["evidence", "Evidence"],
    ["findings", "Findings"],
    ["actions", "Actions"],
    ["criteria", "Criteria"],
    ["unknowns", "Unknowns"],
    ["stops", "Stops"],
    ["report", "Report"],
    ["executor", "The exact executor"],
    ["files", "Files"],
    ["receipts", "Receipts"],
    ["revisions", "Revisions"],
  ];
  const section = (id: string, title: string, html: string) =>
    `<section id="${id}" aria-labelledby="${id}-h"><h2 id="${id}-h">${e(title)}</h2>\n${html}\n</section>`;
  const receipts =
    v.receipts.length > 4
      ? `<details class="long" open><summary>${v.receipts.length} receipts, oldest first</summary>\n${renderReceipts(v.receipts)}\n</details>`
      : renderReceipts(v.receipts);
  const panel = `<aside id="decide" class="decision-panel" aria-labelledby="decide-h">
<h2 id="decide-h">Decide <span class="decide-on">revision ${v.revision}, <code class="hash" title="${e(v.hash)}">${e(v.hash.slice(0, 15))}…</code></span></h2>
${forms === null ? `<p class="decision-none">${v.stale ? "Nothing to decide on this revision: it is no longer current." : `Nothing for you to decide now: ${e(describeState(v.state))}.`}</p>` : notShown + forms}
</aside>`;

  const body = `${stale}<h1>Revision ${v.revision} of ${v.latestRevision}: <code>${e(v.planner)}</code> → <code>${e(v.executor.id)}</code></h1>
${renderConfirmation(v.confirmation ?? null)}<div class="revision-layout">
<div class="revision-lead">
${renderDecisionSummary(v)}
</div>
${panel}
<div class="revision-rest">
<nav aria-label="On this page"><h2 class="toc-h">On this page</h2><ul class="toc">${nav.map(([id, title]) => `<li><a href="#${id}">${e(title as string)}</a></li>`).join("")}</ul></nav>
${sections.map(([id, title, html]) => section(id, title, html)).join("\n")}
${records}
${section("report", "Report", report)}
${section("executor", "The exact executor", executor)}
${section("files", `Files (${v.filesNotListed?.total ?? v.files.length})`, filesNotListed + renderHashedFiles(v.files, v.removedFiles, previous, commentForm))}
${section("receipts", "Receipts", receipts)}
${section("revisions", "Revisions", revisions)}
</div>
</div>`;
  return renderLayout(v.layout, `${v.planner} revision ${v.revision}`, body, "main-wide has-decision-panel");
}

/** One comment: the item it names (its kind and ID, or the file line) and the reviewer's words, all escaped. */
function renderCommentItem(c: { item: string; kind: string; text: string }): string {
  const e = escapeHtml;
  return `<span class="comment-item">${c.kind === "file" ? "line" : e(c.kind)} <code>${e(c.item)}</code></span>: <span class="comment-text">${e(c.text)}</span>`;
}
