import { describe, expect, it } from "vitest";
import { startTags } from "../test-support/html-checks.js";
import { sampleRevisionPage } from "../test-support/sample-views.js";
import { REPORT_RENDER_LIMIT } from "./render-agent-documents.js";
import { PLANNER_WORDS_LINE } from "./render-planner-words.js";
import { renderRevisionPage } from "./render-revision-page.js";

const HASH2 = `sha256:${"b".repeat(64)}`;

describe("renderRevisionPage", () => {
  const html = renderRevisionPage(sampleRevisionPage());

  it("heads the page with planner → executor, revision n of m, the full hash and the state", () => {
    expect(html).toContain("<h1>Revision 2 of 2: <code>MD-29</code> → <code>MD-30</code></h1>");
    expect(html).toContain(`<code class="hash copyable">${HASH2}</code>`);
    expect(html).toContain(">plan review pending</dd>");
  });

  it("shows what changed since revision 1: the feedback that asked for it and each record by ID, with field diffs", () => {
    expect(html).toContain(`<h2 id="changes-h">What changed since revision 1</h2>`);
    expect(html).toContain(`Changes requested by alice:</p>\n<blockquote class="note">Say how to roll back A2.</blockquote>`);
    expect(html).toContain(`<span class="change-kind">added</span> <code>+ACTION:A2</code> — Restart the service`);
    expect(html).toContain(`<span class="change-kind">removed</span> <code>=VERIFY:C2</code>`);
    expect(html).toContain(
      `<span class="field">risk</span>: <del><span class="visually-hidden">was: </span>medium</del> → <ins><span class="visually-hidden">now: </span>low</ins>`,
    );
  });

  it("shows a changed file's diff by line, each added or removed line marked in words as well as by its sign", () => {
    expect(html).toContain(`<del class="diff-del"><span class="visually-hidden">removed: </span>-Pool is fine.</del>`);
    expect(html).toContain(`<ins class="diff-add"><span class="visually-hidden">added: </span>+Pool is small.</ins>`);
    expect(html).toContain(`<span class="diff-hunk">@@ -1,3 +1,3 @@</span>`);
  });

  it("shows evidence, findings with their confidence, actions with target, risk, rollback, verification and dependencies", () => {
    expect(html).toContain("<code>@EVIDENCE:E1</code> logs/app.log: timeouts at 03:00");
    expect(html).toContain("<h3><code>#FINDING:F1</code> The pool is too small</h3>\n<dl><dt>confidence</dt><dd>high</dd>");
    expect(html).toContain(
      "<dt>target</dt><dd>config/pool.yaml</dd><dt>risk</dt><dd>low</dd><dt>rollback</dt><dd>restore the old size</dd>",
    );
    expect(html).toContain("<dt>verified by</dt><dd><code>=VERIFY:C1</code></dd>");
    expect(html).toContain("<dt>rollback</dt><dd><strong>none given</strong></dd>");
    expect(html).toContain("<dt>depends on</dt><dd><code>+ACTION:A1</code></dd>");
    expect(html).toContain("<dt>addresses</dt><dd><code>#FINDING:F1</code></dd>");
  });

  it("shows criteria, unknowns with their status and owner, and the handoff's stops", () => {
    expect(html).toContain("<code>=VERIFY:C1</code> No timeouts for an hour — method: dashboard");
    expect(html).toContain(`<h2 id="unknowns-h">Unknowns (1 open)</h2>`);
    expect(html).toContain(`Is the replica healthy? <span class="status">(open, owner: dba)</span>`);
    expect(html).toContain("<code>!STOP:needs-dba</code> resolved");
  });

  it("renders report.md with its headings under the Report section", () => {
    expect(html).toContain(`<h2 id="report-h">Report</h2>\n<div class="markdown"><h3>Report</h3>`);
    expect(html).toContain(`<a href="https://example.org/runbook" rel="noreferrer">the runbook</a>`);
  });

  it("renders raw HTML and javascript: links in report.md inert", () => {
    const report = "<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))";
    const page = renderRevisionPage({ ...sampleRevisionPage(), report });
    expect(page).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(page).toContain("[x](javascript:alert(1))");
    expect(startTags(page).some((t) => t.name === "img" || [...t.attrs.keys()].some((a) => a.startsWith("on")))).toBe(false);
  });

  it("shows the exact executor: ID, title, file digest and its body", () => {
    expect(html).toContain("<dt>ID</dt><dd><code>MD-30</code></dd>\n<dt>title</dt><dd>Apply the fix</dd>");
    expect(html).toContain(`<dt>file digest</dt><dd><code class="hash">sha256:${"e".repeat(64)}</code></dd>`);
    expect(html).toContain("<h3>Execute</h3>\n<p>Apply only the approved actions.</p>");
  });

  it("shows every hashed file with size and sha256, its text, and a binary file as binary with its lossy view", () => {
    expect(html).toContain(`<code>report.md</code> <span class="change-kind change-changed">changed since revision 1</span>`);
    expect(html).toContain(`<dt>size</dt><dd>40 bytes</dd><dt>sha256</dt><dd><code class="hash">${"c".repeat(64)}</code></dd>`);
    expect(html).toContain(`<pre class="file-text" tabindex="0"># Report\n\nPool is small.\n</pre>`);
    expect(html).toContain("<strong>Binary, 3 bytes</strong>");
    expect(html).toContain(`<pre class="file-text" tabindex="0">�ab</pre>`);
    expect(html).toContain("<li><code>old-notes.txt</code></li>");
  });

  it("shows the receipts timeline with how each is signed and a verified mark with its reason", () => {
    expect(html).toContain(`signed with an Ed25519 key: <span class="mark mark-ok"><span aria-hidden="true">✓</span> verified</span>`);
    expect(html).toContain(
      `signed with a passkey: <span class="mark mark-bad"><span aria-hidden="true">✗</span> not verified</span> <span class="reason">the passkey is not enrolled</span>`,
    );
    expect(html).toMatch(
      /not signed: recorded by the gate on [^<]+'s word, so it <span class="mark mark-unsigned">proves nothing about who decided<\/span>/,
    );
    expect(html).not.toContain("unsigned: ");
    expect(html).toContain("<dt>decision</dt><dd>changes_requested</dd>");
  });

  it("links every revision, marking this one as the current page", () => {
    expect(html).toContain(`<a href="/runs/run_0123456789abcdef/pairs/MD-29/revisions/1">Revision 1</a>`);
    expect(html).toContain(`<a href="/runs/run_0123456789abcdef/pairs/MD-29/revisions/2" aria-current="page">Revision 2</a>`);
  });

  it("gives every form the CSRF token, the hash shown on the page, data-passkey, a submit button and an alert region", () => {
    const forms = mainOf(html).split("<form ").slice(1);
    expect(forms).toHaveLength(4);
    for (const form of forms) {
      expect(form).toMatch(/^id="form-[a-z-]+" class="decision" method="post" action="\/runs\/[^"]+" data-passkey>/);
      expect(form).toContain(`<input type="hidden" name="csrf" value="csrf-token-1">`);
      expect(form).toContain(`<input type="hidden" name="handoff_hash" value="${HASH2}">`);
      expect(form).toMatch(/<button type="submit"(?: class="destructive")?>Sign and [^<]+<\/button>/);
      expect(form).toMatch(/<div class="form-alert" id="form-[a-z-]+-alert" role="alert" aria-live="assertive"><\/div>/);
    }
  });

  it("requires a reason to decline, and feedback or comments on items to request changes (the gate refuses neither)", () => {
    expect(html).toContain(`<textarea id="feedback-changes" name="feedback" rows="5" data-required-unless-comments></textarea>`);
    expect(html).toContain(`name="comment:A1" form="form-request-changes"`);
    expect(html).toContain(`<textarea id="feedback-decline" name="feedback" rows="4" required></textarea>`);
    expect(html).toContain(`<input type="hidden" name="decision" value="changes_requested">`);
  });

  it("asks the consent question naming the executor's ID and title, with mode, environment, scope, budget and expiry", () => {
    expect(html).toContain("<legend>May MD-30 (Apply the fix) act on MD-29&#39;s plan, revision 2?</legend>");
    // The whole question, exactly as the library words it, one click away; the limits in one line that opens to the fields.
    expect(html).toContain(
      `<details class="consent-question-whole" id="consent-question-whole"><summary>The whole question, as it is signed</summary>\n<p>May MD-30 (Apply the fix) now act on the approved frozen plan of MD-29, revision 2`,
    );
    expect(html).toContain(
      `<details class="consent-limits" id="consent-limits"><summary>Limits: mode APPLY_SAFE, environment staging, actions A1, budget 3</summary>`,
    );
    expect(html).toContain(`<option value="APPLY_SAFE" selected>APPLY_SAFE</option>`);
    expect(html).toContain(`<input type="text" id="consent-environment" name="environment" value="staging" required>`);
    expect(html).toContain(`<input type="checkbox" id="consent-action-0" name="actions" value="A1" checked>`);
    expect(html).toContain(`<input type="checkbox" id="consent-action-1" name="actions" value="A2">`);
    expect(html).toContain(`<input type="checkbox" id="consent-action-all" name="actions" value="all">`);
    expect(html).toContain(`name="budget" min="0" step="1" inputmode="numeric" value="3">`);
    expect(html).toContain(`name="expires_in_minutes"`);
  });

  it("shows only the forms the state allows", () => {
    const page = renderRevisionPage({ ...sampleRevisionPage(), forms: { approve: "/runs/r/pairs/MD-29/review" } });
    expect(mainOf(page).match(/<form /g)).toHaveLength(1);
    expect(page).toContain("Sign and approve this revision");
    expect(mainOf(renderRevisionPage({ ...sampleRevisionPage(), forms: {} }))).not.toContain("<form");
  });

  it("on a stale revision, says so, links the current revision and shows no form", () => {
    const page = renderRevisionPage({ ...sampleRevisionPage(), stale: { revision: 3, url: "/runs/r/pairs/MD-29/revisions/3" } });
    expect(page).toContain(
      `<p class="banner banner-stale" role="alert">This revision is no longer current — see <a href="/runs/r/pairs/MD-29/revisions/3">revision 3</a>.</p>`,
    );
    expect(mainOf(page)).not.toContain("<form");
  });

  it("says, above the report, that a report.md over the budget is only its head, and where all of it is", () => {
    const v = sampleRevisionPage();
    const sha = "c".repeat(64);
    const files = v.files.map((f) =>
      f.path === "report.md"
        ? {
            ...f,
            size: 2_000_000,
            shown: "head" as const,
            shownBytes: 65536,
            cut: { by: "file" as const, limit: 1048576 },
            frozenAt: `blobs/cc/${sha}`,
          }
        : f,
    );
    const page = renderRevisionPage({ ...v, files });
    const report = page.slice(
      page.indexOf('<h2 id="report-h">'),
      page.indexOf('<div class="markdown">', page.indexOf('<h2 id="report-h">')),
    );
    expect(report).toContain(
      `<p class="banner banner-partial" role="note">Not the whole file: only its first 65536 of 2000000 bytes are shown, because it is over the 1048576-byte limit for a file shown whole`,
    );
    expect(report).toContain(`All of it is in the gate home at blobs/cc/${sha} (sha256 ${sha})`);
  });

  it("never says a handoff has no report.md when its report.md is only not shown", () => {
    const v = sampleRevisionPage();
    const files = v.files.map((f) =>
      f.path === "report.md"
        ? { ...f, shown: "none" as const, shownBytes: 0, text: null, cut: { by: "total" as const, limit: 8388608 } }
        : f,
    );
    const page = renderRevisionPage({ ...v, files, report: null });
    expect(page).not.toContain("This handoff has no <code>report.md</code>");
    expect(page).toContain("Not shown: none of its 40 bytes are shown, because the 8388608 bytes one presentation shows were spent");
  });

  it("says a changed file too large to diff is, with each revision's size and sha256, in place of its diff", () => {
    const v = sampleRevisionPage();
    const [a, b] = ["a".repeat(64), "b".repeat(64)];
    const files = v.files.map((f) =>
      f.path === "report.md"
        ? {
            ...f,
            diff: null,
            diffNotShown: {
              reason: "edits" as const,
              limit: 500,
              found: 6000,
              before: { size: 1, sha256: a },
              after: { size: 2, sha256: b },
            },
          }
        : f,
    );
    expect(renderRevisionPage({ ...v, files })).toContain(
      `<p class="diff-too-large">Too large to diff: at least 6000 lines would be added or removed, over the limit of 500. Revision 1 is 1 bytes, sha256 ${a}; revision 2 is 2 bytes, sha256 ${b}.</p>`,
    );
  });

  it("renders a long report.md as Markdown only up to the render limit, at a line's end, and says so", () => {
    const line = "A line of the report, **bold** and [linked](https://example.org).\n";
    const report = line.repeat(Math.ceil((2 * REPORT_RENDER_LIMIT) / line.length));
    const page = renderRevisionPage({ ...sampleRevisionPage(), report });
    const shown = Math.floor(REPORT_RENDER_LIMIT / line.length) * line.length;
    expect(page).toContain(
      `The report is rendered here only up to its first ${shown} of ${report.length} characters; the text of all that is shown of it is under Files, below.`,
    );
    const section = page.slice(page.indexOf('<h2 id="report-h">'), page.indexOf('<h2 id="executor-h">'));
    expect(section.split("<strong>bold</strong>").length - 1).toBe(shown / line.length);
  });

  it("leads with a summary before any section: findings, each action's target, risk and rollback, open unknowns, stops, what changed", () => {
    const main = mainOf(html);
    const glance = main.slice(main.indexOf('<section id="summary"'), main.indexOf("</section>", main.indexOf('<section id="summary"')));
    expect(main.indexOf('<section id="summary"')).toBeLessThan(main.indexOf('<section id="evidence"'));
    expect(glance).toContain("<h3>What the planner found</h3>");
    expect(glance).toContain(
      '<code>#FINDING:F1</code> <span class="planner-words"><span class="planner-words-by">planner wrote:</span> <q>The pool is too small</q></span>',
    );
    expect(glance).toContain(
      '<code>+ACTION:A1</code> <span class="planner-words"><span class="planner-words-by">planner wrote:</span> <q>Raise the pool size</q></span><dl class="glance-facts"><dt>target</dt><dd>config/pool.yaml</dd><dt>risk</dt><dd>low</dd><dt>rollback</dt><dd>restore the old size</dd></dl>',
    );
    expect(glance).toContain(`<dt>rollback</dt><dd><strong class="missing">none given</strong></dd>`);
    expect(glance).toContain(
      '<code>?UNKNOWN:U1</code> <span class="planner-words"><span class="planner-words-by">planner wrote:</span> <q>Is the replica healthy?</q></span>',
    );
    expect(glance).toContain("<h3>Since revision 1</h3>");
    expect(glance).toContain('alice asked: <q class="note">Say how to roll back A2.</q>');
    expect(glance).toContain(`3 records changed (1 added, 1 changed, 1 removed); 3 files changed. <a href="#changes">See what changed</a>`);
  });

  it("puts the decision panel right after the summary: approve, then request changes and decline each behind its own disclosure, decline destructive", () => {
    const main = mainOf(html);
    const panel = main.slice(main.indexOf('<aside id="decide"'), main.indexOf("</aside>"));
    expect(main.indexOf('<aside id="decide"')).toBeLessThan(main.indexOf('<nav aria-label="On this page">'));
    expect(panel.indexOf('id="form-approve"')).toBeLessThan(panel.indexOf('<details class="decision-option decision-changes"'));
    expect(panel).toMatch(
      /<details class="decision-option decision-changes" id="request-changes">\n<summary>Request changes<\/summary>\n<form id="form-request-changes"/,
    );
    expect(panel).toMatch(
      /<details class="decision-option decision-destructive" id="decline">\n<summary>Decline the plan<\/summary>[\s\S]*<button type="submit" class="destructive">Sign and decline the plan<\/button>/,
    );
    expect(panel).toContain(`revision 2, <code class="hash" title="${HASH2}">${HASH2.slice(0, 15)}…</code>`);
  });

  it("lists the page's sections under On this page, the summary and the panel first", () => {
    expect(html).toMatch(
      /<nav aria-label="On this page"><h2 class="toc-h">On this page<\/h2><ul class="toc"><li><a href="#summary">At a glance<\/a><\/li><li><a href="#decide">Decide<\/a><\/li>/,
    );
  });

  it("shows the executor's text once, rendered, with the whole file one click away", () => {
    const executor = html.slice(html.indexOf('<section id="executor"'), html.indexOf('<section id="files"'));
    expect(executor.split("Apply only the approved actions.").length - 1).toBe(2);
    expect(executor).toContain(
      `<details class="long" id="executor-file"><summary>The whole file, exactly as the executor receives it</summary>`,
    );
    expect(executor.indexOf("<h3>Execute</h3>")).toBeLessThan(executor.indexOf('id="executor-file"'));
  });

  it("names each action in the consent scope by its ID and summary, marked as the planner's words", () => {
    expect(html).toContain(
      `<label for="consent-action-0"><code>A1</code> <span class="planner-words"><span class="planner-words-by">planner wrote:</span> <q>Raise the pool size</q></span></label>`,
    );
  });

  it("shows a hostile action summary beside its consent checkbox as one marked, escaped line, the whole text in a disclosure beside the label", () => {
    const hostile =
      'Tidy logs\n\nNothing to decide now — this consent was already given.\n<p class="banner banner-ok">✓ Approved by alice</p>\n' +
      "x".repeat(400);
    const base = sampleRevisionPage();
    const model = { ...base.model, actions: base.model.actions.map((a, i) => (i === 0 ? { ...a, summary: hostile } : a)) };
    const page = renderRevisionPage({ ...base, model });
    const check = page.slice(page.indexOf('<div class="check"><input type="checkbox" id="consent-action-0"'));
    const row = check.slice(0, check.indexOf("</div>"));
    const label = row.slice(row.indexOf("<label"), row.indexOf("</label>") + 8);
    // The label is the first line only, quoted and marked: nothing of the panel-like lines, no markup of the planner's.
    expect(label).toBe(
      '<label for="consent-action-0"><code>A1</code> <span class="planner-words" title="cut to one line; the whole text is under “whole text”"><span class="planner-words-by">planner wrote:</span> <q>Tidy logs…</q></span></label>',
    );
    // The whole text is one click away, beside the label (never inside it), escaped.
    const whole = row.slice(row.indexOf("</label>") + 8);
    expect(whole).toMatch(
      /^<details class="planner-words-whole"><summary>whole text the planner wrote<\/summary><pre class="file-text">Tidy logs/,
    );
    expect(whole).toContain("Nothing to decide now");
    expect(whole).toContain("&lt;p class=&quot;banner banner-ok&quot;&gt;");
    expect(page).not.toContain('<p class="banner banner-ok">');
  });

  it("cuts a one-line summary past its length, by code points, and says it was cut", () => {
    const base = sampleRevisionPage();
    const long = "😀".repeat(PLANNER_WORDS_LINE + 5);
    const model = { ...base.model, actions: base.model.actions.map((a, i) => (i === 0 ? { ...a, summary: long } : a)) };
    const page = renderRevisionPage({ ...base, model });
    expect(page).toContain(`<q>${"😀".repeat(PLANNER_WORDS_LINE)}…</q>`);
    expect(page).toContain(`<pre class="file-text">${long}</pre>`);
  });

  it("confirms a decision just recorded at the top: the receipt, the hash it binds and what happens next", () => {
    const receipt = {
      kind: "consent",
      who: "alice",
      decision: "approved",
      note: null,
      revision: 2,
      hash: HASH2,
      at: "2026-01-01T00:00:00.000Z",
      signature: "webauthn" as const,
      verified: { ok: true, reason: "alice's enrolled passkey, consent right" },
    };
    const page = mainOf(renderRevisionPage({ ...sampleRevisionPage(), confirmation: receipt }));
    expect(page.indexOf('<section id="confirmation"')).toBeLessThan(page.indexOf('<section id="summary"'));
    expect(page).toContain(`<section id="confirmation" class="confirmation" role="status" tabindex="-1" aria-labelledby="confirmation-h">`);
    expect(page).toContain("Your consent receipt: <strong>approved</strong> on revision 2, signed with your passkey");
    expect(page).toContain(`It binds the handoff hash <code class="hash">${HASH2}</code>.`);
    expect(page).toContain("An operator now starts the executor's agent through the gate (<code>twinlock exec</code>");
    expect(mainOf(html)).not.toContain('id="confirmation"');
  });

  it("shows a record the gate writes itself as recorded by the gate, never as unsigned", () => {
    const admission = {
      kind: "admission",
      who: "operator",
      decision: "admitted",
      note: null,
      revision: 2,
      hash: HASH2,
      at: "2026-01-01T00:00:00.000Z",
      signature: "unsigned" as const,
      byGate: true,
      verified: null,
    };
    const page = renderRevisionPage({ ...sampleRevisionPage(), receipts: [admission] });
    expect(page).toContain(`<span class="mark mark-gate">recorded by the gate</span>`);
    expect(page).not.toContain("unsigned: ");
  });

  it("compares with the revision the reviewer last decided on, names it and their decision, and diffs the files against it", () => {
    const page = renderRevisionPage({ ...sampleRevisionPage(), revision: 4, comparedWith: { revision: 2, yours: "changes_requested" } });
    expect(page).toContain("<h3>Since revision 2, which you asked to change</h3>");
    expect(page).toContain(`<h2 id="changes-h">What changed since revision 2, which you asked to change</h2>`);
    expect(page).toContain(`<span class="change-kind change-changed">changed since revision 2</span>`);
    expect(page).not.toContain("since revision 3");
    const approved = renderRevisionPage({ ...sampleRevisionPage(), revision: 4, comparedWith: { revision: 1, yours: "approved" } });
    expect(approved).toContain("<h3>Since revision 1, which you approved</h3>");
    const previous = renderRevisionPage({ ...sampleRevisionPage(), revision: 4, comparedWith: { revision: 3, yours: null } });
    expect(previous).toContain("<h3>Since revision 3</h3>");
    expect(previous).not.toContain("which you");
  });

  it("has no What changed section on revision 1", () => {
    expect(renderRevisionPage({ ...sampleRevisionPage(), revision: 1, changes: null, requestedBy: null })).not.toContain("What changed");
  });
});

/** The page's own content: the header's sign-out form is the layout's, not the page's. */
function mainOf(html: string): string {
  return html.slice(html.indexOf("<main"));
}

describe("the change a run is bound to", () => {
  it("is named in the summary, escaped, so the person deciding sees which pull request CI and the check will judge", () => {
    const html = renderRevisionPage({ ...sampleRevisionPage(), change: "acme/shop#42" });
    expect(html).toContain("<dt>for change</dt><dd><code>acme/shop#42</code>");
    expect(renderRevisionPage({ ...sampleRevisionPage(), change: "a/b@<x>" })).toContain("<code>a/b@&lt;x&gt;</code>");
  });

  it("is left out for a run made without one", () => {
    expect(renderRevisionPage(sampleRevisionPage())).not.toContain("for change");
  });
});
