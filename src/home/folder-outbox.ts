import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { redactSecrets } from "../errors/redact-secrets.js";
import { readFailureCode, readRegularFile } from "../input/read-regular-file.js";
import { ringOutbox } from "../notify/outbox-signal.js";
import type { Webhook } from "../notify/webhook.js";
import { RUN_ID_PATTERN, type RunEvent, type RunState } from "../run/run-schema.js";
import { atomicWriteFile } from "../store/atomic-write.js";
import {
  compareEntries,
  GAVE_UP,
  type NotificationOutbox,
  type OutboxBacklog,
  type OutboxEntry,
  outboxEntriesOf,
} from "../store/notification-outbox.js";
import { withQueueLock } from "../store/queue-lock.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunListing } from "../store/run-store.js";
import { type GateHome, homeSubdir } from "./gate-home.js";
import { outboxPendingIndex } from "./outbox-pending-index.js";

/** How long delivered entries wait to be removed together. */
const FLUSH_MS = 50;

/** Largest outbox or webhooks file read (the gate writes them; a bigger one was not written by twinlock). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

interface WebhooksFile {
  format: "twinlock-webhooks/1";
  webhooks: Webhook[];
}

/** One run's outbox: the last event seq put in (the cursor), and the entries not yet delivered. */
interface RunOutboxFile {
  format: "twinlock-outbox/1";
  run_id: string;
  through: number;
  entries: OutboxEntry[];
}

/** What the folder outbox reads of the runs to catch up after a crash. */
export interface RunsForCatchUp {
  list(): Promise<RunListing[]>;
  read(ref: string): Promise<LoadedRun>;
}

/**
 * The gate home's outbox (`notify/` in the home, out of the agent's reach):
 * `webhooks.json` (mode 0600: it holds the signing secrets) and one
 * `outbox/RUN_ID.json` per run, each changed under its own lock and written
 * atomically (temporary file, fsync, rename, fsync of the folder), and the
 * pending index `pending/` (see `outboxPendingIndex`) that `due` reads
 * instead of every run's outbox.
 */
export function folderOutbox(home: GateHome, runs: RunsForCatchUp): NotificationOutbox {
  const notifyDir = () => homeSubdir(home, "notify");
  const outboxDir = () => homeSubdir(home, "notify", "outbox");
  const webhooksFile = () => path.join(notifyDir(), "webhooks.json");
  const runFile = (runId: string) => {
    if (!RUN_ID_PATTERN.test(runId)) throw new UsageError(`${JSON.stringify(runId.slice(0, 40))} is not a run ID`);
    return path.join(outboxDir(), `${runId}.json`);
  };
  // Async, so a refusal to make the lock's folder (a home that is gone) is a rejection like any other.
  const withWebhooks = async <T>(fn: () => T | Promise<T>) => withQueueLock(path.join(notifyDir(), "webhooks.queue"), fn, "the webhooks");
  const withRun = async <T>(runId: string, fn: () => T | Promise<T>) =>
    withQueueLock(runFile(runId).replace(/\.json$/, ".queue"), fn, `the outbox of run ${runId}`);

  // Read without making the folder: a home nobody added a webhook to stays as it was.
  const readWebhooks = (): Webhook[] =>
    readJson<WebhooksFile>(path.join(home.dir, "notify", "webhooks.json"), "the webhooks file")?.webhooks ?? [];
  const writeWebhooks = (webhooks: Webhook[]) =>
    atomicWriteFile(
      webhooksFile(),
      `${JSON.stringify({ format: "twinlock-webhooks/1", webhooks } satisfies WebhooksFile, null, 1)}\n`,
      0o600,
    );
  const readRun = (runId: string): RunOutboxFile =>
    readJson<RunOutboxFile>(runFile(runId), `the outbox of run ${runId}`) ?? {
      format: "twinlock-outbox/1",
      run_id: runId,
      through: 0,
      entries: [],
    };
  const index = outboxPendingIndex(home);
  /** Write a run's outbox under its lock, keeping the pending index's invariant: marked before a delivery is added, unmarked after the last is gone. */
  const writeRun = (file: RunOutboxFile) => {
    const pending = hasPending(file);
    if (pending) index.mark(file.run_id);
    atomicWriteFile(runFile(file.run_id), `${JSON.stringify(file)}\n`, 0o600);
    if (!pending) index.unmark(file.run_id);
  };
  /**
   * The runs that may have a delivery to try: the pending index's marks, so a
   * look costs what is waiting, not the home's history. A home whose index is
   * not complete yet (its outbox predates it) is scanned once and the index built;
   * a run whose outbox cannot be read then is marked, so `due` still notes it.
   */
  const pendingRunIds = (): string[] => {
    const marked = index.marked();
    if (marked !== undefined) return marked;
    // Nothing was ever put in: nothing to index, and a home nobody added a webhook to stays as it was.
    if (!isFolder(path.join(home.dir, "notify", "outbox"))) return [];
    const found = outboxRunIds().filter((runId) => {
      try {
        return hasPending(readRun(runId));
      } catch {
        return true;
      }
    });
    index.build(found);
    return found;
  };
  /** A mark over nothing (a kill between a run's last removal and its unmark): removed under the run's lock, rechecked there. */
  const clearStaleMark = (runId: string) =>
    withRun(runId, () => {
      if (!hasPending(readRun(runId))) index.unmark(runId);
    }).catch(() => {});
  const outboxRunIds = (): string[] =>
    // Listed without making the folder: a home without an outbox has nothing waiting.
    listNames(path.join(home.dir, "notify", "outbox"))
      .filter((n) => n.endsWith(".json"))
      .map((n) => n.slice(0, -5))
      .filter((id) => RUN_ID_PATTERN.test(id));

  /** Change one entry of a run's outbox under its lock (nothing when it is gone: delivered by another server, or removed). */
  const changeEntry = (entry: OutboxEntry, change: (file: RunOutboxFile, index: number) => void) =>
    withRun(entry.run_id, () => {
      const file = readRun(entry.run_id);
      const index = file.entries.findIndex((e) => e.id === entry.id);
      if (index < 0) return;
      change(file, index);
      writeRun(file);
    });

  /**
   * Delivered entries not yet removed from their files: the next of a run's
   * entries is offered at once, and the removals are written together a
   * moment later (one write per run, not per delivery). A crash in between
   * sends those again, under the same IDs: at least once, as promised.
   */
  const done = new Map<string, string>(); // entry ID → its run
  let timer: NodeJS.Timeout | undefined;
  /** The removals being written now (one batch at a time): what `flush` waits for. */
  let writing: Promise<void> = Promise.resolve();
  const writeDone = async (): Promise<boolean> => {
    const taken = new Map(done);
    // Only the runs with deliveries to remove, each on its own: one unreadable run's file holds back no other's.
    let failed = false;
    for (const runId of new Set(taken.values())) {
      const ids = [...taken].filter(([, r]) => r === runId).map(([id]) => id);
      const set = new Set(ids);
      try {
        await withRun(runId, () => {
          const file = readRun(runId);
          const kept = file.entries.filter((e) => !set.has(e.id));
          if (kept.length !== file.entries.length) writeRun({ ...file, entries: kept });
        });
        for (const id of ids) done.delete(id);
      } catch {
        // A home that is gone has nothing left to remove from; otherwise still delivered, still not offered again
        // here, and the next flush writes it (a restart first sends it again).
        if (isFolder(home.dir)) failed = true;
        else for (const id of ids) done.delete(id);
      }
    }
    return failed;
  };
  const writeNow = () => {
    writing = writing.then(writeDone).then((failed) => {
      if (failed) scheduleFlush();
    });
    return writing;
  };
  const scheduleFlush = () => {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void writeNow();
    }, FLUSH_MS);
    // Held back only to batch: a process that ends first sends those again after its restart, under the same IDs.
    timer.unref();
  };
  const waiting = (runId: string) => readRun(runId).entries.filter((e) => !done.has(e.id));

  const outbox: NotificationOutbox = {
    addWebhook: (webhook) =>
      withWebhooks(() => {
        const all = readWebhooks();
        if (all.some((w) => w.id === webhook.id)) throw new UsageError(`webhook ${webhook.id} already exists`);
        writeWebhooks([...all, webhook]);
      }),
    listWebhooks: async () => readWebhooks(),
    async removeWebhook(id) {
      const removed = await withWebhooks(() => {
        const all = readWebhooks();
        const kept = all.filter((w) => w.id !== id);
        if (kept.length === all.length) return false;
        writeWebhooks(kept);
        return true;
      });
      if (removed)
        for (const runId of outboxRunIds())
          await withRun(runId, () => {
            const file = readRun(runId);
            const kept = file.entries.filter((e) => e.webhook_id !== id);
            if (kept.length !== file.entries.length) writeRun({ ...file, entries: kept });
          });
      return removed;
    },
    async enqueue(runId: string, events: readonly RunEvent[], state: RunState) {
      const webhooks = readWebhooks();
      // No receiver: nothing to tell, and nothing written (a webhook added later hears only of later events).
      if (webhooks.length === 0) return 0;
      const added = await withRun(runId, () => {
        const file = readRun(runId);
        const fresh = events.filter((e) => e.seq > file.through);
        if (fresh.length === 0) return 0;
        const known = new Set(file.entries.map((e) => e.id));
        const entries = outboxEntriesOf(runId, fresh, state, webhooks, Date.now()).filter((e) => !known.has(e.id));
        writeRun({ ...file, through: Math.max(file.through, ...fresh.map((e) => e.seq)), entries: [...file.entries, ...entries] });
        return entries.length;
      });
      if (added > 0) ringOutbox(runId);
      return added;
    },
    async catchUp() {
      const webhooks = readWebhooks();
      if (webhooks.length === 0) return 0;
      const oldest = webhooks.map((w) => w.created_at).sort()[0] as string;
      let added = 0;
      for (const listing of await runs.list()) {
        // A run unchanged since before every webhook was added has nothing to tell any of them.
        if (listing.updated_at < oldest) continue;
        if (readRun(listing.run_id).through >= listing.revision) continue;
        try {
          const run = await runs.read(listing.ref);
          added += await outbox.enqueue(run.state.run_id, run.file.events, run.state);
        } catch {
          // A run that no longer reads (moved, failing verification) tells nothing; its own commands say why.
        }
      }
      return added;
    },
    async due(nowMs, limit, note) {
      const out: OutboxEntry[] = [];
      for (const runId of pendingRunIds()) {
        let entries: OutboxEntry[];
        try {
          const file = readRun(runId);
          if (!hasPending(file)) {
            await clearStaleMark(runId);
            continue;
          }
          entries = file.entries.filter((e) => !done.has(e.id));
        } catch (error) {
          // One run's unreadable outbox holds back only that run's notifications.
          note?.({ notify: "outbox of a run unreadable, skipped", run: runId, error: redactSecrets((error as Error).message) });
          continue;
        }
        const heads = new Map<string, OutboxEntry>();
        for (const e of entries.sort(compareEntries))
          if (e.next_attempt_ms !== GAVE_UP && !heads.has(e.webhook_id)) heads.set(e.webhook_id, e);
        for (const e of heads.values()) if (e.next_attempt_ms <= nowMs) out.push(e);
        if (out.length >= limit) break;
      }
      return out.sort((a, b) => a.next_attempt_ms - b.next_attempt_ms).slice(0, limit);
    },
    // One server holds a gate home's folder store (serve is its one writer): no other process takes its entries.
    claim: () => Promise.resolve(true),
    delivered(entry) {
      done.set(entry.id, entry.run_id);
      scheduleFlush();
      return Promise.resolve();
    },
    async flush() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await writeNow();
    },
    failed: (entry, nextAttemptMs, error) =>
      changeEntry(entry, (file, index) => {
        const e = file.entries[index] as OutboxEntry;
        file.entries[index] = { ...e, attempts: e.attempts + 1, next_attempt_ms: nextAttemptMs, last_error: error.slice(0, 300) };
      }),
    async backlog() {
      const by = new Map<string, OutboxBacklog>();
      for (const runId of outboxRunIds())
        for (const e of waiting(runId)) {
          const b = by.get(e.webhook_id) ?? { webhook_id: e.webhook_id, pending: 0, failed: 0, last_error: null };
          if (e.next_attempt_ms === GAVE_UP) b.failed++;
          else b.pending++;
          if (e.last_error !== null) b.last_error = e.last_error;
          by.set(e.webhook_id, b);
        }
      return [...by.values()];
    },
  };
  return outbox;
}

function readJson<T>(file: string, what: string): T | undefined {
  let bytes: Buffer;
  try {
    bytes = readRegularFile(file, what, { maxBytes: MAX_FILE_BYTES });
  } catch (error) {
    if (readFailureCode(error) === "ENOENT") return undefined;
    throw error;
  }
  try {
    return JSON.parse(bytes.toString("utf8")) as T;
  } catch (error) {
    throw new IntegrityError(
      `${what} (${file}) is not JSON; it was edited by hand — restore it or remove it`,
      {},
      { code: "HOME_DAMAGED", cause: error },
    );
  }
}

/** Whether a run's outbox holds a delivery still to try (one failed for good is kept, never tried again). */
function hasPending(file: RunOutboxFile): boolean {
  return file.entries.some((e) => e.next_attempt_ms !== GAVE_UP);
}

function isFolder(dir: string): boolean {
  return statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}

function listNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
