import { createHash } from "node:crypto";
import { type Notification, notificationsOf } from "../notify/notification-kinds.js";
import type { Webhook } from "../notify/webhook.js";
import type { RunEvent, RunState } from "../run/run-schema.js";

/** One delivery waiting in the outbox: a notification for one webhook, with its stable ID and its retry state. */
export interface OutboxEntry {
  /** The Standard Webhooks `webhook-id`: the same on every retry, so a receiver de-duplicates by it. */
  id: string;
  webhook_id: string;
  run_id: string;
  seq: number;
  part: number;
  notification: Notification;
  attempts: number;
  /** Milliseconds since the epoch before which it is not tried again; `GAVE_UP` once it failed for good. */
  next_attempt_ms: number;
  last_error: string | null;
}

/**
 * An entry's `next_attempt_ms` once the receiver refused it for good: it is
 * kept (and counted in the backlog as failed), never offered again, and the
 * run's next entry for that webhook goes on.
 */
export const GAVE_UP = -1;

/** How many of a webhook's deliveries wait, how many failed for good, and why the last try failed. */
export interface OutboxBacklog {
  webhook_id: string;
  pending: number;
  failed: number;
  last_error: string | null;
}

/**
 * The durable outbox of notifications (issue 27), beside the runs in the
 * same store. A decision's notifications are put in with it (PostgreSQL: in
 * its transaction; the gate home: under the run's outbox lock right after,
 * caught up from a per-run cursor on the next write or at `serve` start, so
 * a crash between the two loses nothing). An entry leaves only when
 * delivered (or its webhook is removed). Delivery is at least once; each
 * entry's ID never changes.
 */
export interface NotificationOutbox {
  addWebhook(webhook: Webhook): Promise<void>;
  listWebhooks(): Promise<Webhook[]>;
  /** False when there was no such webhook. Its waiting deliveries go with it. */
  removeWebhook(id: string): Promise<boolean>;
  /**
   * Put the notifications of `events` (a run's, in order, with the state
   * after them) in the outbox for every webhook that wants them and was added
   * before the event; idempotent (an entry's ID is its key).
   */
  enqueue(runId: string, events: readonly RunEvent[], state: RunState): Promise<number>;
  /** Bring every run's notifications up to date (after a crash between a decision and its enqueue); a no-op where they are transactional. */
  catchUp(): Promise<number>;
  /**
   * What may be sent now: for each (run, webhook) only the first entry
   * waiting (so a run's notifications reach each webhook in order; one that
   * failed for good is passed over), and only when its backoff has passed; at
   * most `limit`. A run whose outbox cannot be read is skipped, told to
   * `note`, and the others go on.
   */
  due(nowMs: number, limit: number, note?: (line: Record<string, unknown>) => void): Promise<OutboxEntry[]>;
  /**
   * Take the entry for one try until `untilMs`, if it is still as `due`
   * gave it (no other process took it or tried it since): false when another
   * did. Several servers on one store then send each entry once at a time,
   * so a run's notifications reach a receiver in order and a GitHub check is
   * never set back to an earlier state; one that dies mid-try leaves the
   * entry due again at `untilMs` (still at least once).
   */
  claim(entry: OutboxEntry, untilMs: number): Promise<boolean>;
  /** The entry was delivered (a 2xx): it leaves the outbox. */
  delivered(entry: OutboxEntry): Promise<void>;
  /** The try failed: count it and wait until `nextAttemptMs`, or (`GAVE_UP`) keep it as failed for good and never offer it again. */
  failed(entry: OutboxEntry, nextAttemptMs: number, error: string): Promise<void>;
  backlog(): Promise<OutboxBacklog[]>;
  /**
   * Write now what is held back in memory (the gate home's batched removals
   * of delivered entries) and resolve once no write of the outbox is under
   * way: a deliverer that closes, and the store's `close`, wait for it, so
   * nothing of the outbox writes after them unless it is used again.
   */
  flush(): Promise<void>;
}

/** An entry's ID, from what it tells and to whom: stable across retries, restarts and a second enqueue. */
export function outboxEntryId(webhookId: string, runId: string, seq: number, part: number): string {
  return `msg_${createHash("sha256").update(`${webhookId}\u0000${runId}\u0000${seq}\u0000${part}`).digest("hex").slice(0, 32)}`;
}

/** The entries `events` make for `webhooks`: a webhook hears of events recorded after it was added, and of the kinds it asked for. */
export function outboxEntriesOf(
  runId: string,
  events: readonly RunEvent[],
  state: RunState,
  webhooks: readonly Webhook[],
  nowMs: number,
): OutboxEntry[] {
  if (webhooks.length === 0) return [];
  const out: OutboxEntry[] = [];
  for (const event of events)
    for (const n of notificationsOf(event, state))
      for (const w of webhooks) {
        if (!w.events.includes(n.type) || event.at < w.created_at) continue;
        out.push({
          id: outboxEntryId(w.id, runId, n.seq, n.part),
          webhook_id: w.id,
          run_id: runId,
          seq: n.seq,
          part: n.part,
          notification: n,
          attempts: 0,
          next_attempt_ms: nowMs,
          last_error: null,
        });
      }
  return out;
}

/** Order within a run: by event, then by the event's notifications. */
export function compareEntries(a: Pick<OutboxEntry, "seq" | "part">, b: Pick<OutboxEntry, "seq" | "part">): number {
  return a.seq - b.seq || a.part - b.part;
}
