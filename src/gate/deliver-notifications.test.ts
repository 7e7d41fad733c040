import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentToken } from "../server/agent-tokens.js";
import {
  apiOf,
  call,
  decide,
  hashNow,
  PLANNER,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
  TEST_ORIGIN,
} from "../test-support/gate-server-fixture.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../test-support/webhook-receiver.js";
import { addWebhook } from "./configure-webhooks.js";
import { isPermanentRefusal, type Notifier, retryDelayMs, startNotifier } from "./deliver-notifications.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  removeServerWorlds();
});

async function receiver(behave?: Parameters<typeof startWebhookReceiver>[1]): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver("", behave);
  cleanups.push(() => r.close());
  return r;
}

function notifier(w: ServerWorld, o: Partial<Parameters<typeof startNotifier>[0]> = {}): Notifier {
  const n = startNotifier({ store: w.store, origin: TEST_ORIGIN, pollMs: 50, baseDelayMs: 20, maxDelayMs: 200, ...o });
  cleanups.push(() => n.close());
  return n;
}

async function subscribe(w: ServerWorld, r: WebhookReceiver, format = "json", events = "all") {
  const hook = await addWebhook(w.store, { url: r.url, format, events });
  r.secret = hook.secret;
  return hook;
}

/** The agent freezes, the reviewer asks for changes, the agent freezes again, the reviewer approves and consents. */
async function reviewFlow(w: ServerWorld) {
  const reviewer = await reviewerFor(w, "rita");
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
  const freeze = async () => expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
  await freeze();
  await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback: "name the rollback" });
  const { writeFileSync, readFileSync } = await import("node:fs");
  writeFileSync(`${w.handoff}/report.md`, `${readFileSync(`${w.handoff}/report.md`, "utf8")}\nrollback named\n`);
  await freeze();
  await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "approved" });
  await decide(w, reviewer, apiOf(w).consent, { handoff_hash: hashNow(w), approve: true, mode: "APPLY_SAFE", environment: "staging" });
}

const FLOW_TYPES = [
  "twinlock.plan.review_waiting",
  "twinlock.plan.changes_requested",
  "twinlock.plan.review_waiting",
  "twinlock.plan.approved",
  "twinlock.consent.waiting",
  "twinlock.consent.given",
];

describe("delivering notifications from the outbox", () => {
  it("tells a JSON receiver every event a person or agent waits for, signed, once per ID, in the run's order, with a link to the page", async () => {
    const w = await serverWorld();
    const r = await receiver();
    await subscribe(w, r);
    notifier(w);
    await reviewFlow(w);
    await eventually(() => r.unique().length >= FLOW_TYPES.length, "every notification delivered");
    expect(r.deliveries.every((d) => d.verified)).toBe(true);
    expect(r.unique().map((d) => d.body.type)).toEqual(FLOW_TYPES);
    const changes = r.unique()[1]?.body.data as Record<string, unknown>;
    expect(changes).toMatchObject({ planner: PLANNER, revision: 1, detail: "name the rollback", asked: "the planner", by: "rita" });
    expect(changes.url).toBe(`${TEST_ORIGIN}/runs/${w.runId}/pairs/${PLANNER}/revisions/1`);
    // The last answer reaches the gate a moment after the receiver recorded it; then nothing is left to send.
    await eventually(async () => (await w.store.notifications.due(Date.now() + 1e9, 100)).length === 0, "the outbox emptied");
  });

  it("gives Slack and Teams the run, pair, revision, hash prefix, who is asked and the page — and never a button or action", async () => {
    const w = await serverWorld();
    const slack = await receiver();
    const teams = await receiver();
    await subscribe(w, slack, "slack", "plan.review_waiting");
    await subscribe(w, teams, "teams", "plan.review_waiting");
    notifier(w);
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    await eventually(() => slack.unique().length === 1 && teams.unique().length === 1, "both delivered");
    for (const d of [...slack.deliveries, ...teams.deliveries]) {
      expect(d.verified).toBe(true);
      const text = JSON.stringify(d.body);
      for (const fact of [
        w.runId,
        PLANNER,
        "Revision",
        hashNow(w).slice(0, 19),
        "a reviewer",
        `/runs/${w.runId}/pairs/${PLANNER}/revisions/1`,
      ])
        expect(text).toContain(fact);
      expect(text).not.toMatch(/"type":"(button|actions|Action\.[A-Za-z]+)"|"actions"|"potentialAction"/);
    }
    expect(slack.deliveries[0]?.body.text).toMatch(/plan waiting for review/);
    expect(teams.deliveries[0]?.body.attachments).toHaveLength(1);
  });

  it("leaves nothing behind once closed: the delivered entries are removed by the close, and a world removed after stays gone", async () => {
    const w = await serverWorld();
    const r = await receiver();
    await subscribe(w, r, "json", "plan.review_waiting");
    const n = startNotifier({ store: w.store, origin: TEST_ORIGIN, pollMs: 50 });
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    await eventually(() => r.deliveries.length >= 1, "the delivery");
    // The receiver has answered; the gate may still be between its answer and the removal it holds back to batch.
    await eventually(async () => (await w.store.notifications.due(Date.now() + 1e9, 10)).length === 0, "the delivery taken");
    await n.close();
    const outboxFile = path.join(w.home.dir, "notify", "outbox", `${w.runId}.json`);
    expect((JSON.parse(readFileSync(outboxFile, "utf8")) as { entries: unknown[] }).entries).toEqual([]);
    removeServerWorlds();
    // Whatever outlived the world (a late flush, a look) is refused rather than making its home again.
    await w.store.notifications.flush();
    await n.close();
    expect(existsSync(w.dir)).toBe(false);
  });

  it("retries a failing receiver with backoff under the same ID until it answers 2xx", async () => {
    const w = await serverWorld();
    const r = await receiver((n, _req, res) => void res.writeHead(n <= 3 ? 503 : 200).end());
    await subscribe(w, r, "json", "plan.review_waiting");
    notifier(w);
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    await eventually(() => r.deliveries.length >= 4, "the fourth try");
    await eventually(async () => (await w.store.notifications.backlog()).length === 0, "the outbox emptied");
    expect(new Set(r.deliveries.map((d) => d.id)).size).toBe(1);
    expect(r.deliveries.every((d) => d.verified)).toBe(true);
  });

  it("keeps a notification the receiver refuses for good (a 4xx) as failed after 5 tries, and delivers the run's next ones", async () => {
    const w = await serverWorld();
    const logs: Array<Record<string, unknown>> = [];
    // The first notification is refused every time; the later ones are taken.
    let refused = "";
    const r = await receiver((_n, req, res) => {
      const id = String(req.headers["webhook-id"]);
      if (refused === "" || refused === id) {
        refused = id;
        res.writeHead(404).end();
      } else res.writeHead(204).end();
    });
    await subscribe(w, r, "json", "plan.review_waiting,stop.raised");
    notifier(w, { log: (e) => logs.push(e) });
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    await w.store.update(w.runFile, () => ({
      events: [{ type: "stop_raised", actor: "test", data: { reason: "halt", workflow: null, note: null } }],
      result: undefined,
    }));
    await eventually(() => r.unique().length === 2, "the next notification delivered");
    expect(r.deliveries.filter((d) => d.id === refused)).toHaveLength(5);
    await eventually(async () => (await w.store.notifications.backlog())[0]?.pending === 0, "the next one removed");
    expect(await w.store.notifications.backlog()).toEqual([
      { webhook_id: expect.any(String), pending: 0, failed: 1, last_error: "HTTP 404" },
    ]);
    expect(logs.some((l) => l.notify === "gave up" && l.id === refused && l.attempts === 5)).toBe(true);
  });

  it("keeps retrying a receiver that answers 5xx or 429 past the refusal bound (never given up)", async () => {
    const w = await serverWorld();
    const r = await receiver((n, _req, res) => void res.writeHead(n % 2 === 0 ? 429 : 503).end());
    await subscribe(w, r, "json", "plan.review_waiting");
    notifier(w, { maxRefusals: 2, maxDelayMs: 40 });
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    await eventually(() => r.deliveries.length >= 6, "a sixth try");
    const [b] = await w.store.notifications.backlog();
    expect([b?.pending, b?.failed]).toEqual([1, 0]);
  });

  it("tells which answers refuse for good: a 4xx but 408, 409, 425 and 429", () => {
    expect([400, 401, 403, 404, 410, 413, 422].every(isPermanentRefusal)).toBe(true);
    expect([200, 307, 408, 409, 425, 429, 500, 503].some(isPermanentRefusal)).toBe(false);
  });

  it("follows no redirect: a 3xx is a failed try, kept in the outbox", async () => {
    const w = await serverWorld();
    const elsewhere = await receiver();
    const r = await receiver((_n, _req, res) => void res.writeHead(307, { location: elsewhere.url }).end());
    await subscribe(w, r, "json", "plan.review_waiting");
    notifier(w);
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    await eventually(() => r.deliveries.length >= 2, "a retry");
    expect(elsewhere.deliveries).toEqual([]);
    expect((await w.store.notifications.backlog())[0]?.last_error).toMatch(/HTTP 307 \(a redirect, not followed\)/);
  });

  it("is not held up by a receiver that never answers or one whose answer never ends (attack: a hostile receiver)", async () => {
    const w = await serverWorld();
    const silent = await receiver(() => {}); // takes the request, never answers
    const endless = await receiver((_n, _req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const drip = setInterval(() => res.write("x".repeat(16_384)), 1);
      res.on("close", () => clearInterval(drip));
    });
    const good = await receiver();
    for (const r of [silent, endless, good]) await subscribe(w, r, "json", "plan.review_waiting,stop.raised");
    notifier(w, { concurrency: 4, timeoutMs: 1_000, maxResponseBytes: 1024 });
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    for (const reason of ["a", "b", "c"])
      await w.store.update(w.runFile, () => ({
        events: [{ type: "stop_raised", actor: "test", data: { reason: `halt-${reason}`, workflow: null, note: null } }],
        result: undefined,
      }));
    // The gate answers while a delivery hangs.
    expect((await call(w, apiOf(w).pair, { token })).status).toBe(200);
    await eventually(() => good.unique().length === 4 && endless.unique().length === 4, "the good and the endless receivers told");
    // The endless answer was cut off, not read to its end; the silent receiver holds one delivery at a time, then is given up on.
    expect(endless.cutOff).toBeGreaterThanOrEqual(1);
    await eventually(
      async () => (await w.store.notifications.backlog()).some((b) => /no answer within 1000 ms/.test(b.last_error ?? "")),
      "the silent try timed out",
    );
    expect(silent.unique().length).toBe(1);
    const backlog = await w.store.notifications.backlog();
    expect(backlog.map((b) => b.pending)).toEqual([4]);
  });

  it("waits between tries exponentially, capped, with jitter between half and the whole (property)", () => {
    fc.assert(
      fc.property(fc.nat(40), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempts, u) => {
        const d = retryDelayMs(attempts, 1000, 3_600_000, () => u);
        const exp = Math.min(3_600_000, 1000 * 2 ** attempts);
        expect(d).toBeGreaterThanOrEqual(Math.floor(exp / 2));
        expect(d).toBeLessThanOrEqual(exp);
      }),
    );
  });
});
