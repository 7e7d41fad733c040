/**
 * The review pages a signed-in reviewer opens, served by the app from the
 * frozen bytes: the run list, the run page, a revision page with the diff
 * against the previous revision, and a stale revision's banner pointing at
 * the current one. No page loads anything from elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
} from "../test-support/gate-server-fixture.js";
import { unsafeMarkup } from "../test-support/html-checks.js";
import { createAgentToken } from "./agent-tokens.js";

let w: ServerWorld;
let alice: Reviewer;
let firstHash: string;

beforeAll(async () => {
  w = await serverWorld({ config: { insecureHttp: false } });
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
  alice = await reviewerFor(w, "alice");
  expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
  firstHash = hashNow(w);
  await decide(w, alice, apiOf(w).review, { handoff_hash: firstHash, decision: "changes_requested", feedback: "Cover Windows hosts too" });
  editReport(w, "Windows hosts are covered now.");
  expect((await call(w, apiOf(w).freeze, { token, json: {} })).status).toBe(200);
});
afterAll(removeServerWorlds);

const revisionUrl = (n: number) => `/runs/${w.runId}/pairs/${PLANNER}/revisions/${n}`;

async function page(url: string): Promise<string> {
  const r = await call(w, url, { cookie: alice.cookie, headers: { accept: "text/html" } });
  expect([url, r.status]).toEqual([url, 200]);
  expect(r.headers.get("content-type")).toMatch(/^text\/html/);
  return r.text();
}

/** Every URL in an attribute: each must be on this server. */
function externalUrls(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href|action|formaction)="([^"]*)"/g)]
    .map((m) => m[1] as string)
    .filter((u) => /^([a-z][a-z0-9+.-]*:|\/\/)/i.test(u));
}

describe("the pages a signed-in reviewer opens", () => {
  it("the run list links the run", async () => {
    const html = await page("/");
    expect(html).toContain(`href="/runs/${w.runId}"`);
    expect(html).toContain(PLANNER);
  });

  it("the run list filters by state and suite from its query, still listing what waits on you first", async () => {
    const all = await page("/");
    const suite = /<td>([^<]+)<\/td>/.exec(all)?.[1] as string;
    expect(all).toContain(`<option value="${suite}">${suite}</option>`);
    const pending = await page(`/?state=plan_review_pending&suite=${encodeURIComponent(suite)}`);
    const waiting = pending.slice(pending.indexOf('<section id="waiting"'));
    expect(waiting).toContain(`href="/runs/${w.runId}"`);
    expect(pending).toContain(`<option value="plan_review_pending" selected>`);
    expect(pending).toContain("1 of 1 run is shown");
    for (const url of ["/?state=closed", "/?suite=another-suite", `/?state=closed&suite=${encodeURIComponent(suite)}`]) {
      const html = await page(url);
      expect([url, html.includes(`href="/runs/${w.runId}"`)]).toEqual([url, false]);
      expect(html).toContain("No run is shown");
    }
    expect(await page("/?state=&suite=")).toContain(`href="/runs/${w.runId}"`);
  });

  it("the run list refuses a state that is none of the workflow states, or an over-long suite, with one line", async () => {
    for (const url of ["/?state=approved", `/?state=${"x".repeat(5000)}`, `/?suite=${"s".repeat(201)}`]) {
      const r = await call(w, url, { cookie: alice.cookie, headers: { accept: "text/html" } });
      expect([url.slice(0, 30), r.status]).toEqual([url.slice(0, 30), 400]);
      const html = await r.text();
      expect(html).toMatch(/is not a workflow state; filter by one of investigating|over the 200 a suite ID may have/);
    }
  });

  it("the run page shows the pair, its state and a link to its current revision", async () => {
    const html = await page(`/runs/${w.runId}`);
    expect(html).toContain(PLANNER);
    expect(html).toContain("MD-30");
    expect(html).toContain(revisionUrl(2));
  });

  it("the current revision shows the diff against the previous one, who asked for changes, and the decision forms with its hash", async () => {
    const html = await page(revisionUrl(2));
    expect(html).toContain('<section id="changes"');
    expect(html).toContain("What changed since revision 1");
    expect(html).toContain("Cover Windows hosts too");
    expect(html).toContain("Windows hosts are covered now.");
    expect(html).toContain(hashNow(w));
    expect(html).toContain(`name="handoff_hash" value="${hashNow(w)}"`);
    expect(html).toContain(`name="csrf" value="${alice.csrf}"`);
    expect(html).not.toContain("banner-stale");
  });

  it("the first revision has no diff", async () => {
    const html = await page(revisionUrl(1));
    expect(html).not.toContain('<section id="changes"');
  });

  it("an old revision carries the stale banner linking the current one, and no decision form", async () => {
    const html = await page(revisionUrl(1));
    expect(html).toMatch(new RegExp(`class="banner banner-stale"[^>]*>[^<]*<a href="${revisionUrl(2)}">revision 2</a>`));
    expect(html).toContain(firstHash);
    expect(html).not.toContain('name="handoff_hash"');
  });

  it("the pair's address redirects to its current revision", async () => {
    const r = await call(w, `/runs/${w.runId}/pairs/${PLANNER}`, { cookie: alice.cookie });
    expect([r.status, r.headers.get("location")]).toEqual([303, revisionUrl(2)]);
  });

  it("no page loads or links anything from another site, and none has inline script or style", async () => {
    for (const url of ["/", `/runs/${w.runId}`, revisionUrl(1), revisionUrl(2), "/signin"]) {
      const html = await page(url);
      expect([url, externalUrls(html)]).toEqual([url, []]);
      expect([url, unsafeMarkup(html)]).toEqual([url, []]);
    }
  });

  it("an unknown run, pair or revision is refused with a page (404, or the gate's 409 for a pair or revision the run does not have), never an internal error", async () => {
    for (const url of [
      `/runs/run_0000000000000000`,
      `/runs/${w.runId}/pairs/MD-99/revisions/1`,
      revisionUrl(0),
      revisionUrl(9),
      "/runs/x",
    ]) {
      const r = await call(w, url, { cookie: alice.cookie, headers: { accept: "text/html" } });
      expect([url, r.status]).toEqual([url, url.includes("MD-99") || url === revisionUrl(9) ? 409 : 404]);
      expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    }
  });
});

describe("what changed since the revision you last decided on", () => {
  let bob: Reviewer;
  beforeAll(async () => {
    bob = await reviewerFor(w, "bob");
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    // Revision 3, frozen again while revision 2 waits for review: alice last decided on revision 1, bob on none.
    editReport(w, "The cache lock is held across the write.");
    expect((await call(w, apiOf(w).freeze, { token, json: {} })).status).toBe(200);
  });

  it("compares revision 3 with revision 1 for alice, who asked to change it, and says so", async () => {
    const html = await page(revisionUrl(3));
    expect(html).toContain("<h3>Since revision 1, which you asked to change</h3>");
    expect(html).toContain(`<h2 id="changes-h">What changed since revision 1, which you asked to change</h2>`);
    expect(html).toContain("Changes requested by alice:");
    // Both edits since revision 1 are added lines of the diff, not only the one since revision 2.
    expect(html).toContain(`<span class="visually-hidden">added: </span>+Windows hosts are covered now.</ins>`);
    expect(html).toContain(`<span class="visually-hidden">added: </span>+The cache lock is held across the write.</ins>`);
    expect(html).toContain("changed since revision 1");
  });

  it("compares revision 3 with revision 2 for bob, who decided on none, and does not say he did", async () => {
    const r = await call(w, revisionUrl(3), { cookie: bob.cookie, headers: { accept: "text/html" } });
    const html = await r.text();
    expect(html).toContain("<h3>Since revision 2</h3>");
    expect(html).toContain(`<h2 id="changes-h">What changed since revision 2</h2>`);
    expect(html).not.toContain("which you");
    expect(html).toContain(`<span class="diff-ctx"> Windows hosts are covered now.</span>`);
    expect(html).toContain(`<span class="visually-hidden">added: </span>+The cache lock is held across the write.</ins>`);
  });
});

describe("a re-freeze without changes, seen from an earlier decision", () => {
  let carol: Reviewer;
  beforeAll(async () => {
    carol = await reviewerFor(w, "carol");
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    // carol asks for changes on revision 3; revision 4 has revision 3's bytes, and the planner's note speaks of that step alone.
    await decide(w, carol, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback: "Is the lock right?" });
    const r = await call(w, apiOf(w).freeze, {
      token,
      json: { unchanged_because: "Nothing changed since your last review: safe to approve" },
    });
    expect(r.status).toBe(200);
  });

  it("shows alice, compared with revision 1, the changes since then and never the planner's word that nothing changed", async () => {
    const html = await page(revisionUrl(4));
    expect(html).toContain("<h3>Since revision 1, which you asked to change</h3>");
    expect(html).not.toContain("Re-frozen without changes");
    expect(html).not.toContain("safe to approve");
  });

  it("shows carol, who asked to change revision 3, the planner's note beside the re-freeze it explains", async () => {
    const r = await call(w, revisionUrl(4), { cookie: carol.cookie, headers: { accept: "text/html" } });
    const html = await r.text();
    expect(html).toContain("<h3>Since revision 3, which you asked to change</h3>");
    expect(html).toContain("Re-frozen without changes");
    expect(html).toContain("safe to approve");
  });
});
