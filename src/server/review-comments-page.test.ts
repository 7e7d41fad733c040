/**
 * Comments on plan items through the server: the request-changes form's
 * comment fields become the review receipt's comments, and the next
 * revision's page says for each whether the item it names changed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commentItemChanges, type ReviewComment } from "../gate/review-comments.js";
import type { HandoffModel } from "../handoff/handoff-model.js";
import {
  apiOf,
  call,
  decide,
  editReport,
  hashNow,
  PLANNER,
  type Reviewer,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
  workflowNow,
} from "../test-support/gate-server-fixture.js";
import { sampleRevisionPage } from "../test-support/sample-views.js";
import { renderRevisionPage } from "../web/render-revision-page.js";
import { createAgentToken } from "./agent-tokens.js";

let w: ServerWorld;
let alice: Reviewer;
let token: string;
let firstPage: string;

beforeAll(async () => {
  w = await serverWorld({ config: { insecureHttp: false } });
  ({ token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId }));
  alice = await reviewerFor(w, "alice");
  expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
  firstPage = await page(1);
});
afterAll(removeServerWorlds);

async function page(n: number): Promise<string> {
  const r = await call(w, `/runs/${w.runId}/pairs/${PLANNER}/revisions/${n}`, { cookie: alice.cookie, headers: { accept: "text/html" } });
  expect(r.status).toBe(200);
  return r.text();
}

describe("comments on plan items, from the page to the next revision", () => {
  it("the revision page offers a comment field per record and per file, belonging to the request-changes form", () => {
    for (const id of ["E1", "F1", "A1", "A2", "V1"]) expect(firstPage).toContain(`name="comment:${id}" form="form-request-changes"`);
    expect(firstPage).toMatch(/name="comment-file:report\.md" form="form-request-changes"/);
    expect(firstPage).toMatch(/name="comment-line:report\.md" form="form-request-changes"/);
    // The decision panel and its passkey flow stay as they were.
    expect(firstPage).toMatch(/<form id="form-request-changes" class="decision" method="post" action="[^"]+" data-passkey>/);
  });

  it("refuses a form's comment on an item the revision does not hold, and records nothing", async () => {
    const r = await decide(w, alice, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", "comment:A9": "x" });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('\\"A9\\" is not an evidence item, finding, action or criterion of this revision');
    const tooLong = await decide(w, alice, apiOf(w).review, {
      handoff_hash: hashNow(w),
      decision: "changes_requested",
      "comment:A1": "x".repeat(4097),
    });
    expect(tooLong.status).toBe(400);
    expect(workflowNow(w).reviews).toEqual([]);
  });

  it("the next revision's page says, for each comment of the request, whether its item changed", async () => {
    const fields = {
      handoff_hash: hashNow(w),
      decision: "changes_requested",
      feedback: "",
      "comment:A1": "Use a barrier <b>and</b> a timeout.",
      "comment:A2": "Fine as it is.",
      "comment:E1": "Which build?",
      "comment-file:report.md": "Say which service.",
      "comment-line:report.md": "1",
    };
    const decided = await decide(w, alice, apiOf(w).review, fields);
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(workflowNow(w).reviews[0]?.comments?.map((c) => `${c.kind} ${c.item}`)).toEqual([
      "action A1",
      "action A2",
      "evidence E1",
      "file report.md:1",
    ]);
    const plan = path.join(w.handoff, "action_plan.json");
    const actions = JSON.parse(readFileSync(plan, "utf8"));
    actions.actions[0].summary = "Add a regression test with a barrier and a 5 s timeout";
    writeFileSync(plan, JSON.stringify(actions, null, 2));
    editReport(w, "It is the cart service.");
    expect((await call(w, apiOf(w).freeze, { token, json: {} })).status).toBe(200);
    const html = await page(2);
    const said = [
      ...html.matchAll(/<span class="change-kind change-(\w+)">\w+<\/span> <span class="comment-item">(\w+) <code>([^<]+)<\/code>/g),
    ].map((m) => `${m[3]} ${m[1]}`);
    expect(said).toEqual(["A1 changed", "A2 unchanged", "E1 unchanged", "report.md:1 changed"]);
    // The reviewer's words, like the agent's, are escaped.
    expect(html).toContain("Use a barrier &lt;b&gt;and&lt;/b&gt; a timeout.");
    expect(html).not.toContain("<b>and</b>");
    // The receipt list shows every comment that was signed, by item.
    expect(html).toContain("A1: Use a barrier &lt;b&gt;and&lt;/b&gt; a timeout.; A2: Fine as it is.");
  });

  it("says changed exactly for the items whose content changed, whichever those are (property over the rendered page)", () => {
    const base = sampleRevisionPage();
    const records = [
      ...base.model.evidence.map((r) => ["evidence", r] as const),
      ...base.model.findings.map((r) => ["finding", r] as const),
      ...base.model.actions.map((r) => ["action", r] as const),
      ...base.model.criteria.map((r) => ["criterion", r] as const),
    ];
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: records.length, maxLength: records.length }), (changes) => {
        const after: HandoffModel = structuredClone(base.model);
        const lists = { evidence: after.evidence, finding: after.findings, action: after.actions, criterion: after.criteria };
        records.forEach(([kind, r], i) => {
          const mine = (lists[kind] as Array<{ id: string; source: unknown }>).find((x) => x.id === r.id);
          if (changes[i] && mine) mine.source = { ...(mine.source as object), edited: true };
        });
        const comments: ReviewComment[] = records.map(([kind, r]) => ({ item: r.id, kind, text: `on ${r.id}` }));
        const judged = commentItemChanges(comments, { model: base.model, files: [] }, { model: after, files: [] });
        const html = renderRevisionPage({
          ...base,
          revision: 2,
          latestRevision: 2,
          previousComments: comments.map((c, i) => ({ ...c, change: judged[i] ?? "removed" })),
        });
        const list = html.slice(html.indexOf('<ul class="comment-changes">'));
        const said = [...list.slice(0, list.indexOf("</ul>")).matchAll(/<span class="change-kind change-(\w+)">/g)].map((m) => m[1]);
        expect(said).toEqual(changes.map((c) => (c ? "changed" : "unchanged")));
      }),
      { numRuns: 30 },
    );
  });
});
