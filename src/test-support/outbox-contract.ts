import { describe, expect, it } from "vitest";
import { NOTIFICATION_KIND_NAMES } from "../notify/notification-kinds.js";
import { newWebhookId, newWebhookSecret, type Webhook } from "../notify/webhook.js";
import { GAVE_UP } from "../store/notification-outbox.js";
import type { RunStore } from "../store/run-store.js";
import { AT, created, stop } from "./run-store-contract.js";

/** A store under test, a fresh run reference, and a second store on the same data (as after a restart). */
export interface OutboxHarness {
  store: RunStore;
  newRef(): string;
  reopen(): RunStore;
  dispose(): Promise<void>;
  /** Whether several processes (servers) deliver from this store, so a claim by one must exclude the others. */
  shared?: boolean;
}

function webhook(events = [...NOTIFICATION_KIND_NAMES], createdAt = "2029-01-01T00:00:00.000Z"): Webhook {
  return { id: newWebhookId(), url: "http://127.0.0.1:9/hook", events, format: "json", secret: newWebhookSecret(), created_at: createdAt };
}

/**
 * The outbox contract every RunStore keeps (issue 27): run unchanged against
 * the gate-home folder store and PostgreSQL. Stops stand for any event a
 * person waits for: they need no suite.
 */
export function outboxContract(name: string, open: () => Promise<OutboxHarness>): void {
  describe(`the notification outbox contract: ${name}`, () => {
    const withStore = async (fn: (h: OutboxHarness) => Promise<void>) => {
      const h = await open();
      try {
        await fn(h);
      } finally {
        await h.dispose();
      }
    };

    it("keeps webhooks with their secrets, lists them, and removes one by ID", () =>
      withStore(async ({ store }) => {
        const [a, b] = [webhook(), webhook(["stop.raised"])];
        await store.notifications.addWebhook(a as Webhook);
        await store.notifications.addWebhook(b as Webhook);
        expect((await store.notifications.listWebhooks()).map((w) => w.id).sort()).toEqual([a?.id, b?.id].sort());
        expect((await store.notifications.listWebhooks()).find((w) => w.id === a?.id)?.secret).toBe(a?.secret);
        expect(await store.notifications.removeWebhook(a?.id as string)).toBe(true);
        expect(await store.notifications.removeWebhook(a?.id as string)).toBe(false);
        expect((await store.notifications.listWebhooks()).map((w) => w.id)).toEqual([b?.id]);
      }));

    it("puts a decision's notifications in the outbox with the decision, once per webhook that asked, under IDs that never change", () =>
      withStore(async ({ store, newRef }) => {
        const all = webhook();
        const none = webhook(["plan.approved"]);
        await store.notifications.addWebhook(all);
        await store.notifications.addWebhook(none);
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        const { run } = await store.update(ref, () => ({ events: [stop("a")], result: undefined }), { now: () => AT });
        const due = await store.notifications.due(Date.now(), 100);
        expect(due.map((e) => [e.webhook_id, e.notification.type, e.seq])).toEqual([[all.id, "stop.raised", 2]]);
        // Put in again (a catch-up, a second server): nothing new, the same ID.
        await store.notifications.enqueue(run.state.run_id, run.file.events, run.state);
        await store.notifications.catchUp();
        expect((await store.notifications.due(Date.now(), 100)).map((e) => e.id)).toEqual(due.map((e) => e.id));
      }));

    it("puts nothing in the outbox when the decision refuses (the notifications go with the decision or not at all)", () =>
      withStore(async ({ store, newRef }) => {
        await store.notifications.addWebhook(webhook());
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        await expect(
          store.update(ref, () => {
            throw new Error("refused");
          }),
        ).rejects.toThrow("refused");
        await expect(store.update(ref, () => ({ events: [stop("late")], result: undefined }), { expectedRevision: 0 })).rejects.toThrow();
        expect(await store.notifications.due(Date.now(), 10)).toEqual([]);
      }));

    it("offers each run's notifications to a webhook one at a time, in the run's order, and the next only once the first is delivered", () =>
      withStore(async ({ store, newRef }) => {
        const w = webhook();
        await store.notifications.addWebhook(w);
        const refs = [newRef(), newRef()];
        for (const ref of refs) {
          await store.create(ref, [created(store)], AT);
          await store.update(ref, () => ({ events: [stop("a"), stop("b")], result: undefined }), { now: () => AT });
          await store.update(ref, () => ({ events: [stop("c")], result: undefined }), { now: () => AT });
        }
        const seen = new Map<string, string[]>();
        for (let round = 0; round < 3; round++) {
          const due = await store.notifications.due(Date.now(), 100);
          expect(due).toHaveLength(2);
          for (const e of due) {
            seen.set(e.run_id, [...(seen.get(e.run_id) ?? []), e.notification.detail as string]);
            await store.notifications.delivered(e);
          }
        }
        expect([...seen.values()]).toEqual([
          ["!STOP:a", "!STOP:b", "!STOP:c"],
          ["!STOP:a", "!STOP:b", "!STOP:c"],
        ]);
        expect(await store.notifications.due(Date.now(), 100)).toEqual([]);
      }));

    it("holds a failed delivery (and the run's later ones) back until its retry time, counting the attempt", () =>
      withStore(async ({ store, newRef }) => {
        const w = webhook();
        await store.notifications.addWebhook(w);
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        await store.update(ref, () => ({ events: [stop("a"), stop("b")], result: undefined }), { now: () => AT });
        const [first] = await store.notifications.due(Date.now(), 10);
        const later = Date.now() + 60_000;
        await store.notifications.failed(first as NonNullable<typeof first>, later, "HTTP 500");
        expect(await store.notifications.due(Date.now(), 10)).toEqual([]);
        const retried = await store.notifications.due(later, 10);
        expect(retried.map((e) => [e.id, e.attempts, e.last_error])).toEqual([[first?.id, 1, "HTTP 500"]]);
        expect(await store.notifications.backlog()).toEqual([{ webhook_id: w.id, pending: 2, failed: 0, last_error: "HTTP 500" }]);
      }));

    it("keeps a delivery that failed for good, counts it as failed, never offers it again, and offers the run's next one", () =>
      withStore(async ({ store, newRef, reopen }) => {
        const w = webhook();
        await store.notifications.addWebhook(w);
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        await store.update(ref, () => ({ events: [stop("a"), stop("b")], result: undefined }), { now: () => AT });
        const [first] = await store.notifications.due(Date.now(), 10);
        expect(first?.notification.detail).toBe("!STOP:a");
        await store.notifications.failed(first as NonNullable<typeof first>, GAVE_UP, "HTTP 410");
        const next = await store.notifications.due(Date.now() + 1e12, 10);
        expect(next.map((e) => e.notification.detail)).toEqual(["!STOP:b"]);
        expect(await store.notifications.backlog()).toEqual([{ webhook_id: w.id, pending: 1, failed: 1, last_error: "HTTP 410" }]);
        // Kept across a restart, still failed, still not offered.
        const again = reopen();
        try {
          expect((await again.notifications.due(Date.now() + 1e12, 10)).map((e) => e.notification.detail)).toEqual(["!STOP:b"]);
          expect(await again.notifications.backlog()).toEqual([{ webhook_id: w.id, pending: 1, failed: 1, last_error: "HTTP 410" }]);
        } finally {
          await again.close();
        }
        await store.notifications.delivered(next[0] as NonNullable<(typeof next)[0]>);
        expect(await store.notifications.due(Date.now() + 1e12, 10)).toEqual([]);
      }));

    it("tells a webhook only of events recorded after it was added, and forgets a removed webhook's deliveries", () =>
      withStore(async ({ store, newRef }) => {
        const late = webhook(undefined, "2031-01-01T00:00:00.000Z");
        const early = webhook();
        await store.notifications.addWebhook(late);
        await store.notifications.addWebhook(early);
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        await store.update(ref, () => ({ events: [stop("a")], result: undefined }), { now: () => AT });
        expect((await store.notifications.due(Date.now(), 10)).map((e) => e.webhook_id)).toEqual([early.id]);
        await store.notifications.removeWebhook(early.id);
        expect(await store.notifications.due(Date.now(), 10)).toEqual([]);
        expect(await store.notifications.backlog()).toEqual([]);
      }));

    it("lets one server at a time take an entry for a try: a second server's claim of it fails, and the run's next entry waits", () =>
      withStore(async ({ store, newRef, reopen, shared }) => {
        await store.notifications.addWebhook(webhook());
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        await store.update(ref, () => ({ events: [stop("a"), stop("b")], result: undefined }), { now: () => AT });
        const [first] = await store.notifications.due(Date.now(), 10);
        const entry = first as NonNullable<typeof first>;
        const other = reopen();
        try {
          const [seen] = await other.notifications.due(Date.now(), 10);
          expect(seen?.id).toBe(entry.id);
          const until = Date.now() + 60_000;
          expect(await store.notifications.claim(entry, until)).toBe(true);
          if (!shared) return; // one server holds a folder store: nobody else to exclude
          expect(await other.notifications.claim(seen as NonNullable<typeof seen>, until)).toBe(false);
          // Taken: neither server is offered it (nor the run's next one) before the claim lapses, both after.
          expect(await other.notifications.due(Date.now(), 10)).toEqual([]);
          expect((await other.notifications.due(until, 10)).map((e) => e.notification.detail)).toEqual(["!STOP:a"]);
          await store.notifications.delivered(entry);
          expect((await other.notifications.due(Date.now(), 10)).map((e) => e.notification.detail)).toEqual(["!STOP:b"]);
        } finally {
          await other.close();
        }
      }));

    it("looks no more at a run once nothing of it waits (delivered or given up on), and again once it records something new", () =>
      withStore(async ({ store, newRef, reopen }) => {
        await store.notifications.addWebhook(webhook());
        const [done, gaveUp, waits] = [newRef(), newRef(), newRef()];
        for (const ref of [done, gaveUp, waits]) {
          await store.create(ref, [created(store)], AT);
          await store.update(ref, () => ({ events: [stop(ref === waits ? "waits" : "first")], result: undefined }), { now: () => AT });
        }
        const runIdOf = async (ref: string) => (await store.read(ref)).state.run_id;
        const first = await store.notifications.due(Date.now(), 10);
        expect(first).toHaveLength(3);
        for (const e of first)
          if (e.run_id === (await runIdOf(done))) await store.notifications.delivered(e);
          else if (e.run_id === (await runIdOf(gaveUp))) await store.notifications.failed(e, GAVE_UP, "HTTP 410");
        await store.notifications.flush();
        const again = reopen();
        try {
          expect((await again.notifications.due(Date.now() + 1e12, 10)).map((e) => e.run_id)).toEqual([await runIdOf(waits)]);
        } finally {
          await again.close();
        }
        // The run whose deliveries all went has something new: it is offered again, and only that.
        await store.update(done, () => ({ events: [stop("later")], result: undefined }), { now: () => AT });
        const next = await store.notifications.due(Date.now() + 1e12, 10);
        expect(next.map((e) => e.notification.detail).sort()).toEqual(["!STOP:later", "!STOP:waits"]);
        expect(await store.notifications.backlog()).toEqual([expect.objectContaining({ pending: 2, failed: 1 })]);
      }));

    it("keeps every waiting delivery across a restart (a second store on the same data sees them, with the same IDs)", () =>
      withStore(async ({ store, newRef, reopen }) => {
        await store.notifications.addWebhook(webhook());
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        await store.update(ref, () => ({ events: [stop("a")], result: undefined }), { now: () => AT });
        const before = await store.notifications.due(Date.now(), 10);
        const again = reopen();
        try {
          expect((await again.notifications.due(Date.now(), 10)).map((e) => e.id)).toEqual(before.map((e) => e.id));
        } finally {
          await again.close();
        }
      }));
  });
}
