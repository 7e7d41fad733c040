import type pg from "pg";
import { ringOutbox } from "../../notify/outbox-signal.js";
import type { Webhook } from "../../notify/webhook.js";
import type { RunEvent, RunState } from "../../run/run-schema.js";
import { GAVE_UP, type NotificationOutbox, type OutboxEntry, outboxEntriesOf } from "../notification-outbox.js";

interface OutboxRow {
  id: string;
  webhook_id: string;
  run_id: string;
  seq: number;
  part: number;
  notification: string;
  attempts: number;
  next_attempt_ms: string;
  last_error: string | null;
}

interface WebhookRow {
  id: string;
  url: string;
  events: string;
  format: Webhook["format"];
  secret: string;
  created_at: string;
}

const webhookOf = (r: WebhookRow): Webhook => ({ ...r, events: JSON.parse(r.events) });
const entryOf = (r: OutboxRow): OutboxEntry => ({
  id: r.id,
  webhook_id: r.webhook_id,
  run_id: r.run_id,
  seq: r.seq,
  part: r.part,
  notification: JSON.parse(r.notification),
  attempts: r.attempts,
  next_attempt_ms: Number(r.next_attempt_ms),
  last_error: r.last_error,
});

/** Put a decision's notifications in the outbox, in the decision's transaction (`client`): both commit, or neither. */
export async function enqueueInTransaction(
  client: pg.PoolClient,
  runId: string,
  events: readonly RunEvent[],
  state: RunState,
): Promise<number> {
  const webhooks = (await client.query<WebhookRow>("SELECT * FROM twinlock_webhooks")).rows.map(webhookOf);
  const entries = outboxEntriesOf(runId, events, state, webhooks, Date.now());
  for (const e of entries)
    await client.query(
      "INSERT INTO twinlock_outbox (id, webhook_id, run_id, seq, part, notification, next_attempt_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
      [e.id, e.webhook_id, e.run_id, e.seq, e.part, JSON.stringify(e.notification), e.next_attempt_ms],
    );
  return entries.length;
}

/**
 * The team store's outbox: `twinlock_webhooks` and `twinlock_outbox`. A
 * decision's notifications are inserted by its own transaction
 * (`enqueueInTransaction`), so there is nothing to catch up; `due` takes
 * each (run, webhook)'s first row, and `claim` takes it for one server's
 * try (compare-and-set on its retry state), so several servers send each row
 * one at a time, in order; a row whose server died is sent again after its
 * claim lapses (at least once), and the receiver de-duplicates by its ID.
 */
export function postgresOutbox(pool: pg.Pool, describe: (error: unknown) => Error): NotificationOutbox {
  const q = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    try {
      return await pool.query<R>(text, values);
    } catch (error) {
      throw describe(error);
    }
  };
  return {
    async addWebhook(w) {
      await q("INSERT INTO twinlock_webhooks (id, url, events, format, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6)", [
        w.id,
        w.url,
        JSON.stringify(w.events),
        w.format,
        w.secret,
        w.created_at,
      ]);
    },
    listWebhooks: async () => (await q<WebhookRow>("SELECT * FROM twinlock_webhooks ORDER BY created_at, id")).rows.map(webhookOf),
    removeWebhook: async (id) => ((await q("DELETE FROM twinlock_webhooks WHERE id = $1", [id])).rowCount ?? 0) > 0,
    async enqueue(runId, events, state) {
      const client = await pool.connect().catch((e) => Promise.reject(describe(e)));
      try {
        const n = await enqueueInTransaction(client, runId, events, state);
        if (n > 0) ringOutbox(runId);
        return n;
      } catch (error) {
        throw describe(error);
      } finally {
        client.release();
      }
    },
    catchUp: async () => 0,
    // Every write is its own statement, awaited by its caller: nothing is held back.
    flush: async () => {},
    async due(nowMs, limit) {
      // GAVE_UP written in, not a parameter: the pending index (migration 7) is partial on it, and serves this scan.
      const r = await q<OutboxRow>(
        `SELECT * FROM (SELECT DISTINCT ON (run_id, webhook_id) * FROM twinlock_outbox WHERE next_attempt_ms <> ${Number(GAVE_UP)}
           ORDER BY run_id, webhook_id, seq, part) AS head
         WHERE next_attempt_ms <= $1 ORDER BY next_attempt_ms LIMIT $2`,
        [nowMs, limit],
      );
      return r.rows.map(entryOf);
    },
    async claim(entry, untilMs) {
      const r = await q("UPDATE twinlock_outbox SET next_attempt_ms = $2 WHERE id = $1 AND next_attempt_ms = $3 AND attempts = $4", [
        entry.id,
        untilMs,
        entry.next_attempt_ms,
        entry.attempts,
      ]);
      return (r.rowCount ?? 0) > 0;
    },
    async delivered(entry) {
      await q("DELETE FROM twinlock_outbox WHERE id = $1", [entry.id]);
    },
    async failed(entry, nextAttemptMs, error) {
      await q("UPDATE twinlock_outbox SET attempts = attempts + 1, next_attempt_ms = $2, last_error = $3 WHERE id = $1", [
        entry.id,
        nextAttemptMs,
        error.slice(0, 300),
      ]);
    },
    async backlog() {
      const r = await q<{ webhook_id: string; pending: string; failed: string; last_error: string | null }>(
        `SELECT webhook_id, count(*) FILTER (WHERE next_attempt_ms <> $1) AS pending, count(*) FILTER (WHERE next_attempt_ms = $1) AS failed,
           (array_agg(last_error ORDER BY seq DESC) FILTER (WHERE last_error IS NOT NULL))[1] AS last_error
         FROM twinlock_outbox GROUP BY webhook_id`,
        [GAVE_UP],
      );
      return r.rows.map((x) => ({
        webhook_id: x.webhook_id,
        pending: Number(x.pending),
        failed: Number(x.failed),
        last_error: x.last_error,
      }));
    },
  };
}
