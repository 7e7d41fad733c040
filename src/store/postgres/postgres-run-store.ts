import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import type pg from "pg";
import { canonicalJson } from "../../crypto/canonical-hash.js";
import { ConflictError, IntegrityError, RefusalError, UsageError } from "../../errors/errors.js";
import { redactStoreUrl } from "../../errors/redact-secrets.js";
import type { ConsumedConsent } from "../../home/consumed-consents.js";
import { storeFetchedBlob } from "../../home/frozen-bytes.js";
import { type GateHome, openGateHome } from "../../home/gate-home.js";
import { requireTrustedGateSignatures } from "../../home/trusted-gate-keys.js";
import { ringOutbox } from "../../notify/outbox-signal.js";
import { applyEventOwned } from "../../run/apply-event.js";
import { hashEvent } from "../../run/event-chain.js";
import { EventSchema, RUN_FORMAT, RUN_ID_PATTERN, type RunEvent, type RunFile, RunFileSchema } from "../../run/run-schema.js";
import { ensureGateKey } from "../../trust/gate-key.js";
import { signHead } from "../../trust/gate-statement.js";
import { appendTo, type EventDraft, type LoadedRun, verifyRunFile } from "../run-file.js";
import {
  consentHashesOf,
  frozenFilesOf,
  type RunListing,
  type RunStore,
  requireFinishedForImport,
  type UpdateOptions,
} from "../run-store.js";
import { POSTGRES_MIGRATIONS } from "./postgres-migrations.js";
import { enqueueInTransaction, postgresOutbox } from "./postgres-outbox.js";
import { postgresServerState, postgresSharedHome } from "./postgres-shared-home.js";

/** The `pg` driver, loaded only when a PostgreSQL store is used (every other command starts without it). */
function loadPg(): typeof pg {
  return createRequire(import.meta.url)("pg") as typeof pg;
}

/** A name a run may be created under (e.g. what a folder-store user would give as a run file). */
const RUN_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;

/** How many times a decision is retried when PostgreSQL reports a serialization failure or deadlock. */
const RETRIES = 8;

/** A RunStore on PostgreSQL, with the pool it owns. */
export interface PostgresRunStore extends RunStore {
  readonly pool: pg.Pool;
}

/**
 * The team store (SPEC §10): runs and their append-only events in
 * PostgreSQL, so any number of gate servers share one database. A run's
 * reference is its run ID. Each decision is one short transaction that
 * locks the run's row (`SELECT … FOR UPDATE`), re-reads and verifies its
 * events, lets the decision add events, and writes them with the new head;
 * the database decides which of two racing decisions lands, never an
 * in-process lock. A used consent is a row keyed by its hash, written in
 * the admission's own transaction.
 *
 * The database is also the team's trust root: pins, reviewers, agent tokens,
 * frozen bytes, sessions and passkey challenges live in it. Each process
 * keeps a copy of the trust files and frozen bytes in its own folder for this
 * database (`stores/<key>` in the gate home it is given), brought up to the
 * database's version before every read and decision (`SharedHome`).
 */
export function postgresRunStore(url: string, localHome: GateHome, poolOptions: pg.PoolConfig = {}): PostgresRunStore {
  const pool = new (loadPg().Pool)({
    connectionString: url,
    max: 10,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 5_000,
    // A command ends when its work does: idle connections do not hold the process open (a server's listener does).
    allowExitOnIdle: true,
    ...poolOptions,
  });
  // An idle client's error (the database restarted) must not crash the server; the next query reconnects.
  pool.on("error", () => {});
  // Nor may a checked-out client's: pg emits 'error' on it as well as failing its query, and the pool listens only
  // while the client is idle. The failed query carries the error to the decision, which reports it.
  pool.on("connect", (client) => client.on("error", () => {}));
  const label = `PostgreSQL store ${redact(url)}`;
  const copy = openGateHome(path.join(localHome.dir, "stores", storeKey(url)), { create: true });
  const shared = postgresSharedHome(pool, label, copy, transaction, localHome.dir);
  const home: GateHome = {
    ...copy,
    shared: { ...shared, refresh: () => shared.refresh().catch((e) => Promise.reject(describeDatabaseError(e, label))) },
  };

  /** Bring this process's copy of the trust files and of the run's frozen bytes up to the database. */
  async function follow(file: RunFile | undefined): Promise<void> {
    try {
      await shared.refresh();
      if (file) await shared.fetchFrozen(frozenFilesOf(file.events));
    } catch (error) {
      throw describeDatabaseError(error, label);
    }
  }

  /** The last verified copy of each run this process read: later reads verify only the events added since. */
  const verifiedRuns = new Map<string, RunFile>();

  /**
   * A run read from the database and verified: the whole chain the first
   * time, then only the events after the copy this process last verified
   * (each must follow the chain and replay; the result must equal the row's
   * head and state). Undefined when there is no such run.
   */
  async function load(client: pg.PoolClient | pg.Pool, ref: string, lock: boolean): Promise<{ file: RunFile; runId: string } | undefined> {
    const r = await runRow(client, ref, lock);
    if (!r) return undefined;
    const known = verifiedRuns.get(r.run_id);
    if (known && known.revision === r.revision && known.head === r.head) return { file: known, runId: r.run_id };
    const from = known && known.revision < r.revision ? known.revision : 0;
    const events = await client.query<{ event: string }>("SELECT event FROM twinlock_events WHERE run_id = $1 AND seq > $2 ORDER BY seq", [
      r.run_id,
      from,
    ]);
    const added = events.rows.map((e) => EventSchema.parse(JSON.parse(e.event)));
    const file =
      known && from > 0
        ? extendVerified(known, added, r, ref)
        : parseWhole(
            {
              format: RUN_FORMAT,
              revision: r.revision,
              head: r.head,
              ...headSignatureOf(r),
              state: JSON.parse(r.state),
              events: added,
              ...headSignatureOf(r),
            },
            ref,
          );
    verifiedRuns.set(r.run_id, file);
    return { file, runId: r.run_id };
  }

  /** A run's row, by ID or by the name it was created under (locked for the transaction when asked). */
  async function runRow(client: pg.PoolClient | pg.Pool, ref: string, lock: boolean) {
    const row = await client.query<{ run_id: string; revision: number; head: string; state: string; head_signature: string | null }>(
      `SELECT run_id, revision, head, state, head_signature FROM twinlock_runs WHERE ${RUN_ID_PATTERN.test(ref) ? "run_id" : "name"} = $1${lock ? " FOR UPDATE" : ""}`,
      [ref],
    );
    return row.rows[0];
  }

  /** The run-file form of what the database holds, against the run schema (not yet verified). */
  function parseRunFile(json: unknown, ref: string): RunFile {
    const parsed = RunFileSchema.safeParse(json);
    if (!parsed.success) throw new IntegrityError(`run ${ref} in ${label} does not match the run schema; the database was edited by hand`);
    return parsed.data;
  }

  function parseWhole(json: unknown, ref: string): RunFile {
    const file = parseRunFile(json, ref);
    verified(ref, file);
    return file;
  }

  function extendVerified(
    known: RunFile,
    added: RunEvent[],
    row: { revision: number; head: string; state: string; head_signature: string | null },
    ref: string,
  ): RunFile {
    // Copied once and changed in place by each event: linear in the events, and the known run keeps its state.
    let state = structuredClone(known.state);
    let prev = known.head;
    for (const [i, e] of added.entries()) {
      if (e.seq !== known.revision + i + 1 || e.prev !== prev)
        throw new IntegrityError(`run ${ref} in ${label}: event ${e.seq} does not follow the chain; the database was edited by hand`, {
          seq: e.seq,
        });
      state = applyEventOwned(state, e);
      prev = hashEvent(e);
    }
    if (
      prev !== row.head ||
      known.revision + added.length !== row.revision ||
      canonicalJson(state) !== canonicalJson(JSON.parse(row.state))
    )
      throw new IntegrityError(`run ${ref} in ${label}: its head or state is not what its events give; the database was edited by hand`);
    return {
      format: RUN_FORMAT,
      revision: row.revision,
      head: row.head,
      state,
      events: [...known.events, ...added],
      ...headSignatureOf(row),
    };
  }

  function verified(ref: string, file: RunFile): LoadedRun {
    const verdict = verifyRunFile(file);
    if (!verdict.ok) throw new IntegrityError(`run ${ref} in ${label}: ${verdict.reason}`, { seq: verdict.seq });
    return { path: ref, file, state: verdict.state };
  }

  function requireRef(ref: string): void {
    if (!RUN_ID_PATTERN.test(ref) && !RUN_NAME.test(ref))
      throw new UsageError(
        `${JSON.stringify(ref.slice(0, 60))} names no run: give a run ID (run_ and 16 hex digits) or the name the run was created with`,
      );
  }

  async function insertEvents(client: pg.PoolClient, runId: string, events: readonly RunEvent[]): Promise<void> {
    for (const e of events)
      await client.query("INSERT INTO twinlock_events (run_id, seq, hash, event) VALUES ($1, $2, $3, $4)", [
        runId,
        e.seq,
        hashEvent(e),
        JSON.stringify(e),
      ]);
  }

  async function consume(client: pg.PoolClient, runId: string, events: readonly RunEvent[]): Promise<void> {
    for (const e of events) {
      if (e.type !== "admitted") continue;
      const receipt = e.data.receipt as { consent_hash: string; planner: string; executor: string };
      if (!(await markUsed(client, runId, { hash: receipt.consent_hash, planner: receipt.planner, executor: receipt.executor, at: e.at })))
        throw new RefusalError(`the consent ${receipt.consent_hash} was already used by another admission`, { attack: "consent-replay" });
    }
  }

  /** Record a consent as used; false when it was already (by whichever run or server). */
  async function markUsed(
    client: pg.PoolClient,
    runId: string,
    c: { hash: string; planner: string; executor: string; at: string },
  ): Promise<boolean> {
    const inserted = await client.query(
      "INSERT INTO twinlock_consumed_consents (consent_hash, run_id, planner, executor, at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
      [c.hash, runId, c.planner, c.executor, c.at],
    );
    return inserted.rowCount !== 0;
  }

  /** Run `work` in one transaction, retried on serialization failures and deadlocks (SQLSTATE 40001, 40P01). */
  async function transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await connect();
      let committing = false;
      try {
        await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
        const result = await work(client);
        committing = true;
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        const code = (error as { code?: string }).code;
        if ((code === "40001" || code === "40P01") && attempt < RETRIES) continue;
        // The connection went with the COMMIT on its way: the database may have recorded the decision or not.
        if (committing && isConnectionLoss(error))
          throw new ConflictError(
            `${label} was lost while committing (${code ?? "connection lost"}); the decision may have been recorded — read the run before repeating it`,
            { cause: error, retryable: true },
          );
        throw describeDatabaseError(error, label);
      } finally {
        client.release();
      }
    }
  }

  async function connect(): Promise<pg.PoolClient> {
    try {
      return await pool.connect();
    } catch (error) {
      throw describeDatabaseError(error, label);
    }
  }

  return {
    home,
    label,
    pool,
    serverState: postgresServerState(pool),
    notifications: postgresOutbox(pool, (e) => describeDatabaseError(e, label)),
    ready: () => requireCurrentSchema(pool, url),
    close: () => pool.end(),
    async read(ref) {
      requireRef(ref);
      const found = await load(pool, ref, false).catch((e) => Promise.reject(describeDatabaseError(e, label)));
      if (!found) throw new UsageError(`no run ${ref} in ${label}`);
      await follow(found.file);
      // load() verified it (whole, or the events added since this process last did).
      return { path: found.runId, file: found.file, state: found.file.state };
    },
    async readUnverified(ref) {
      requireRef(ref);
      const r = await runRow(pool, ref, false).catch((e) => Promise.reject(describeDatabaseError(e, label)));
      if (!r) throw new UsageError(`no run ${ref} in ${label}`);
      const events = await pool.query<{ event: string }>("SELECT event FROM twinlock_events WHERE run_id = $1 ORDER BY seq", [r.run_id]);
      return parseRunFile(
        {
          format: RUN_FORMAT,
          revision: r.revision,
          head: r.head,
          state: JSON.parse(r.state),
          events: events.rows.map((e) => JSON.parse(e.event)),
        },
        ref,
      );
    },
    async create(ref, drafts, now) {
      const gate = await ensureGateKey(home).catch((e) => Promise.reject(describeDatabaseError(e, label)));
      const run = appendTo(undefined, drafts, now, gate);
      const id = run.state.run_id;
      // A run is named by its creator (as a run file names a folder-store run) and always answers to its ID too.
      requireRef(ref);
      if (RUN_ID_PATTERN.test(ref) && ref !== id) throw new UsageError(`${ref} is another run's ID; name the new run something else`);
      const name = RUN_ID_PATTERN.test(ref) ? null : ref;
      await transaction(async (client) => {
        const inserted = await client.query(
          "INSERT INTO twinlock_runs (run_id, name, home_id, revision, head, state, created_at, updated_at, head_signature) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) ON CONFLICT DO NOTHING",
          [id, name, home.id, run.revision, run.head, JSON.stringify(run.state), now, signatureText(run)],
        );
        if (inserted.rowCount === 0)
          throw new RefusalError(`a run named ${ref} already exists in ${label}; choose another name or continue that run`);
        await shared.uploadFrozen(client, frozenFilesOf(run.events));
        await insertEvents(client, id, run.events);
        await enqueueInTransaction(client, id, run.events, run.state);
      });
      return { path: id, file: run, state: run.state };
    },
    async importRun(ref, file, frozen) {
      requireRef(ref);
      const verdict = verifyRunFile(file);
      if (!verdict.ok) throw new IntegrityError(`the run to import does not verify: ${verdict.reason}`, { seq: verdict.seq });
      const id = file.state.run_id;
      if (RUN_ID_PATTERN.test(ref) && ref !== id)
        throw new UsageError(`${ref} is another run's ID; import under the run's own ID or a name`);
      requireFinishedForImport(file, label);
      await home.shared?.refresh();
      await requireTrustedGateSignatures(home, file);
      // The store records the imported head as its own checkpoint, signed by its own key.
      const gate = await ensureGateKey(home).catch((e) => Promise.reject(describeDatabaseError(e, label)));
      const recorded: RunFile = { ...file, gate_signature: signHead(file, gate, "checkpoint") };
      // Checked against their sha256 as they are kept; then sent with the run, in its transaction.
      for (const entry of frozenFilesOf(file.events)) storeFetchedBlob(copy, entry.sha256, frozen(entry));
      await transaction(async (client) => {
        const at = file.events[file.events.length - 1]?.at ?? new Date().toISOString();
        const inserted = await client.query(
          "INSERT INTO twinlock_runs (run_id, name, home_id, revision, head, state, created_at, updated_at, head_signature) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
          [
            id,
            RUN_ID_PATTERN.test(ref) ? null : ref,
            file.state.home_id,
            file.revision,
            file.head,
            JSON.stringify(file.state),
            file.events[0]?.at ?? at,
            at,
            signatureText(recorded),
          ],
        );
        if (inserted.rowCount === 0)
          throw new RefusalError(`run ${id} (or a run named ${ref}) is already in ${label}; an import never replaces a run`);
        await shared.uploadFrozen(client, frozenFilesOf(file.events));
        await insertEvents(client, id, file.events);
        // Its admissions used their consents, and every other consent it holds is used too: it never admits here.
        await consume(client, id, file.events);
        for (const c of consentHashesOf(file)) await markUsed(client, id, c);
      });
      return { path: id, file: recorded, state: file.state };
    },
    async update<T>(
      ref: string,
      decide: (run: LoadedRun) => Promise<{ events: EventDraft[]; result: T }> | { events: EventDraft[]; result: T },
      options: UpdateOptions = {},
    ) {
      requireRef(ref);
      await follow(undefined);
      // Made (once) before the transaction: making it takes a connection and the trust files' lock of its own.
      const gate = await ensureGateKey(home).catch((e) => Promise.reject(describeDatabaseError(e, label)));
      return transaction(async (client) => {
        const found = await load(client, ref, true);
        if (!found) throw new UsageError(`no run ${ref} in ${label}`);
        await shared.fetchFrozen(frozenFilesOf(found.file.events), client);
        const current: LoadedRun = { path: found.runId, file: found.file, state: found.file.state };
        const id = found.runId;
        if (options.expectedRevision !== undefined && options.expectedRevision !== current.file.revision)
          throw new ConflictError(
            `run ${ref} changed since it was read (revision ${options.expectedRevision}, now ${current.file.revision}); read it again and repeat the decision`,
          );
        const { events, result } = await decide(current);
        if (events.length === 0) return { run: current, result, committed: undefined };
        const now = (options.now ?? (() => new Date()))();
        const next = appendTo(current.file, events, now, gate);
        const added = next.events.slice(current.file.events.length);
        // The frozen bytes a decision names go in with it: the decision is whole or absent, bytes included.
        await shared.uploadFrozen(client, frozenFilesOf(added));
        await insertEvents(client, id, added);
        await consume(client, id, added);
        // The decision's notifications commit with it, or not at all.
        await enqueueInTransaction(client, id, added, next.state);
        await client.query(
          "UPDATE twinlock_runs SET revision = $2, head = $3, state = $4, updated_at = $5, head_signature = $6 WHERE run_id = $1",
          [id, next.revision, next.head, JSON.stringify(next.state), now, signatureText(next)],
        );
        return { run: { path: id, file: next, state: next.state }, result, committed: next };
      }).then(({ committed, ...out }) => {
        // Only what was committed is remembered as verified.
        if (committed) {
          verifiedRuns.set(committed.state.run_id, committed);
          ringOutbox(committed.state.run_id);
        }
        return out;
      });
    },
    async findConsumedConsent(consentHash): Promise<ConsumedConsent | undefined> {
      const r = await pool
        .query<{ run_id: string; planner: string; executor: string; at: Date }>(
          "SELECT run_id, planner, executor, at FROM twinlock_consumed_consents WHERE consent_hash = $1",
          [consentHash],
        )
        .catch((e) => Promise.reject(describeDatabaseError(e, label)));
      const row = r.rows[0];
      return row
        ? { run_id: row.run_id, planner: row.planner, executor: row.executor, consent_hash: consentHash, at: row.at.toISOString() }
        : undefined;
    },
    runFolder: () => undefined,
    async resolve(runId) {
      if (!RUN_ID_PATTERN.test(runId)) return undefined;
      const r = await pool
        .query<{ run_id: string }>("SELECT run_id FROM twinlock_runs WHERE run_id = $1", [runId])
        .catch((e) => Promise.reject(describeDatabaseError(e, label)));
      return r.rows[0]?.run_id;
    },
    async list(): Promise<RunListing[]> {
      const r = await pool
        .query<{ run_id: string; revision: number; updated_at: Date }>(
          "SELECT run_id, revision, updated_at FROM twinlock_runs ORDER BY updated_at DESC, run_id",
        )
        .catch((e) => Promise.reject(describeDatabaseError(e, label)));
      return r.rows.map((row) => ({
        run_id: row.run_id,
        ref: row.run_id,
        revision: row.revision,
        updated_at: row.updated_at.toISOString(),
      }));
    },
  };
}

/**
 * The folder name of a database's copy in a gate home: everything that
 * selects the data (server, port, database, user, options such as a
 * search_path), never the password. Two stores that differ in any of these
 * never share a copy.
 */
function storeKey(url: string): string {
  let where = url;
  try {
    const u = new URL(url);
    u.password = "";
    u.searchParams.sort();
    where = u.toString();
  } catch {
    // an unparsable URL fails at connect, with its own message
  }
  return createHash("sha256").update(where).digest("hex").slice(0, 16);
}

/**
 * Apply the migrations this build knows to the database, each in its own
 * transaction under an advisory lock (two servers starting at once do not
 * both migrate); refuse a database whose schema is newer than this build.
 */
export async function migratePostgres(url: string): Promise<{ from: number; to: number }> {
  const client = new (loadPg().Client)({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    throw describeDatabaseError(error, redact(url));
  }
  try {
    await client.query("SELECT pg_advisory_lock(742006)");
    await client.query(
      "CREATE TABLE IF NOT EXISTS twinlock_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const applied = await client.query<{ max: number | null }>("SELECT max(version) AS max FROM twinlock_schema");
    const from = applied.rows[0]?.max ?? 0;
    const latest = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1]?.version ?? 0;
    if (from > latest)
      throw new UsageError(
        `the database's twinlock schema is version ${from}, newer than this twinlock knows (${latest}); use a twinlock at least as new as the one that migrated it`,
      );
    for (const m of POSTGRES_MIGRATIONS) {
      if (m.version <= from) continue;
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query("INSERT INTO twinlock_schema (version, name) VALUES ($1, $2)", [m.version, m.name]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
    }
    return { from, to: Math.max(from, latest) };
  } finally {
    await client.query("SELECT pg_advisory_unlock(742006)").catch(() => {});
    await client.end().catch(() => {});
  }
}

/** The schema version the database has, refusing one this build cannot serve (older: migrate first; newer: upgrade twinlock). */
export async function requireCurrentSchema(pool: pg.Pool, url: string): Promise<void> {
  const latest = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1]?.version ?? 0;
  let version = 0;
  try {
    const r = await pool.query<{ max: number | null }>("SELECT max(version) AS max FROM twinlock_schema");
    version = r.rows[0]?.max ?? 0;
  } catch (error) {
    if ((error as { code?: string }).code !== "42P01") throw describeDatabaseError(error, redact(url));
  }
  if (version < latest)
    throw new UsageError(
      `the database at ${redact(url)} has twinlock schema ${version}, this twinlock needs ${latest}; run \`twinlock db migrate --store URL\` first`,
    );
  if (version > latest)
    throw new UsageError(
      `the database at ${redact(url)} has twinlock schema ${version}, newer than this twinlock (${latest}); upgrade twinlock`,
    );
}

/** A database failure as one line a person can act on (and a retry hint when it is transient); never the password. */
export function describeDatabaseError(error: unknown, where: string): Error {
  if (error instanceof UsageError || error instanceof RefusalError || error instanceof ConflictError || error instanceof IntegrityError)
    return error;
  const e = error as { code?: string; message?: string };
  if (isConnectionLoss(error))
    return new ConflictError(
      `${where} is not reachable (${e.code ?? "connection lost"}); nothing was recorded — try again when the database is back`,
      { retryable: true },
    );
  if (e.code === "42P01") return new UsageError(`${where} has no twinlock tables; run \`twinlock db migrate --store URL\` first`);
  // Not the database's: a decision's own error (a passkey decision stops at its receipt by throwing) passes through.
  if (typeof e.code !== "string") return error as Error;
  if (e.code === "ERR_INVALID_URL")
    return new UsageError(`${where} is not a connection string PostgreSQL can use; give postgres://USER@HOST:PORT/DB`);
  return new ConflictError(
    `${where} refused the request (${e.code ?? "error"}: ${(e.message ?? "").split("\n")[0]}); nothing was recorded — try again`,
    { retryable: true },
  );
}

/** Whether `error` is the database going away (refused, shut down, starting up, or the connection cut). */
function isConnectionLoss(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return (
    e.code === "ECONNREFUSED" ||
    e.code === "ECONNRESET" ||
    e.code === "57P01" ||
    e.code === "57P03" ||
    e.code === "08006" ||
    e.code === "08001" ||
    /terminat|Connection/i.test(e.message ?? "")
  );
}

/** A connection string without its password. */
export function redact(url: string): string {
  return redactStoreUrl(url);
}

/** A run's head signature as its row keeps it (JSON text), or null. */
function signatureText(file: RunFile): string | null {
  return file.gate_signature ? JSON.stringify(file.gate_signature) : null;
}

/** The `gate_signature` of a run file from its row's head signature; nothing when the row has none (the run schema checks its form). */
function headSignatureOf(row: { head_signature: string | null }): { gate_signature?: RunFile["gate_signature"] } {
  if (row.head_signature === null) return {};
  try {
    return { gate_signature: JSON.parse(row.head_signature) as RunFile["gate_signature"] };
  } catch {
    throw new IntegrityError("a run's head signature in the database is not JSON; the database was edited by hand");
  }
}
