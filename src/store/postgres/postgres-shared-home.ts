import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import type pg from "pg";
import { IntegrityError } from "../../errors/errors.js";
import type { ManifestEntry } from "../../handoff/hash-handoff.js";
import { hasBlob, readBlob, storeFetchedBlob } from "../../home/frozen-bytes.js";
import { type GateHome, listHomeSubdir } from "../../home/gate-home.js";
import {
  type HomeFileChange,
  homeFilePath,
  isSharedHomeFile,
  readHomeText,
  type SharedHome,
  writeHomeText,
} from "../../home/shared-home.js";
import {
  MAX_PENDING_PER_REVIEWER,
  newPendingId,
  PENDING_MS,
  type PendingSignature,
  type PendingStore,
  SealedSignins,
  type UsedSeals,
} from "../../server/pending-signatures.js";
import { isSessionId, newSession, type ReviewerSession, type SessionStore } from "../../server/reviewer-sessions.js";
import { withFileLock } from "../run-file-lock.js";
import type { ServerState } from "../run-store.js";

/** The advisory lock every change of a trust file takes first, so versions become visible in the order they were given. */
const HOME_FILES_LOCK = 742007;

/** Where a server's copy records the database version it holds (beside the copied files, under the same lock). */
const VERSION_FILE = "shared-version.json";

/** Run `work` in one transaction on a client of the pool; the caller maps errors. */
export type Transaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

/** The shared home of a PostgreSQL store, with what the store itself needs: frozen bytes sent with a decision. */
export interface PostgresSharedHome extends SharedHome {
  fetchFrozen(entries: readonly ManifestEntry[], client?: pg.PoolClient): Promise<void>;
  /** Send the frozen files a decision names to the database, in the decision's own transaction (each once, by sha256). */
  uploadFrozen(client: pg.PoolClient, entries: readonly ManifestEntry[]): Promise<void>;
}

/**
 * The trust files of a team database, copied into `copy` (the server's own
 * home folder for this database): `refresh` asks the database for its
 * latest version (one query) and, only when the copy is behind, copies
 * every file changed since, under the copy's lock (servers may share it).
 */
export function postgresSharedHome(
  pool: pg.Pool,
  label: string,
  copy: GateHome,
  transaction: Transaction,
  homeDir: string,
): PostgresSharedHome {
  /** The version this process last saw the copy at; the copy's own file says what it holds. */
  let seen = -1;

  async function refresh(): Promise<void> {
    const latest = await pool.query<{ v: string | null }>("SELECT max(version) AS v FROM twinlock_home_files");
    const newest = Number(latest.rows[0]?.v ?? 0);
    if (newest === seen) return;
    const marker = path.join(copy.dir, VERSION_FILE);
    await withFileLock(marker, async () => {
      const held = readHeldVersion(marker);
      // A process's first look, or a database that went back (restored, or made anew), copies everything again:
      // the copy never keeps a file the database does not hold now.
      const whole = seen === -1 || newest < held;
      if (!whole && held >= newest) return;
      const rows = await pool.query<{ name: string; body: string | null; version: string }>(
        "SELECT name, body, version FROM twinlock_home_files WHERE version > $1 ORDER BY version",
        [whole ? 0 : held],
      );
      let reached = whole ? 0 : held;
      for (const row of rows.rows) {
        if (!isSharedHomeFile(row.name))
          throw new IntegrityError(`${label} holds a trust file named ${row.name}; the database was edited by hand`);
        writeHomeText(homeFilePath(copy, row.name), row.body);
        reached = Number(row.version);
      }
      if (whole) removeFilesNotIn(new Set(rows.rows.filter((r) => r.body !== null).map((r) => r.name)));
      writeHomeText(marker, `${JSON.stringify({ version: reached })}\n`);
    });
    seen = newest;
  }

  /** Remove the copy's trust files the database does not hold (each written file was replaced atomically first). */
  function removeFilesNotIn(held: ReadonlySet<string>): void {
    const names = [
      "pins.json",
      "reviewers.json",
      "gate-key.pem",
      "gate-keys.json",
      ...listHomeSubdir(copy, "tokens").map((n) => `tokens/${n}`),
    ];
    for (const name of names) if (isSharedHomeFile(name) && !held.has(name)) writeHomeText(homeFilePath(copy, name), null);
  }

  async function update<T>(name: string, change: HomeFileChange<T>): Promise<T> {
    const result = await transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [HOME_FILES_LOCK]);
      const row = await client.query<{ body: string | null }>("SELECT body FROM twinlock_home_files WHERE name = $1 FOR UPDATE", [name]);
      const { text, result } = change(row.rows[0]?.body ?? undefined);
      await client.query(
        `INSERT INTO twinlock_home_files (name, body, version) VALUES ($1, $2, nextval('twinlock_home_version'))
         ON CONFLICT (name) DO UPDATE SET body = EXCLUDED.body, version = EXCLUDED.version`,
        [name, text],
      );
      return result;
    });
    // The copy follows the database, never the other way round: it is brought up to date, in version order.
    await refresh();
    return result;
  }

  /** `client`: the transaction's own connection, when called inside one (it must not wait for a second from the pool). */
  async function fetchFrozen(entries: readonly ManifestEntry[], client: pg.PoolClient | pg.Pool = pool): Promise<void> {
    const missing = [...new Set(entries.map((e) => e.sha256))].filter((sha) => !hasBlob(copy, sha));
    if (missing.length === 0) return;
    const rows = await client.query<{ sha256: string; bytes: Buffer }>("SELECT sha256, bytes FROM twinlock_frozen WHERE sha256 = ANY($1)", [
      missing,
    ]);
    // What the database lacks stays missing: reading it then says so (readBlob), naming the file.
    for (const row of rows.rows) storeFetchedBlob(copy, row.sha256, row.bytes);
  }

  async function uploadFrozen(client: pg.PoolClient, entries: readonly ManifestEntry[]): Promise<void> {
    const bySha = new Map(entries.map((e) => [e.sha256, e]));
    if (bySha.size === 0) return;
    const held = await client.query<{ sha256: string }>("SELECT sha256 FROM twinlock_frozen WHERE sha256 = ANY($1)", [[...bySha.keys()]]);
    for (const row of held.rows) bySha.delete(row.sha256);
    for (const entry of bySha.values())
      await client.query("INSERT INTO twinlock_frozen (sha256, bytes) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
        entry.sha256,
        readBlob(copy, entry),
      ]);
  }

  return { label, homeDir, refresh, update, fetchFrozen, uploadFrozen };
}

function readHeldVersion(marker: string): number {
  const text = readHomeText(marker);
  if (text === undefined) return 0;
  try {
    const v = (JSON.parse(text) as { version?: unknown }).version;
    if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return v;
  } catch {
    // damaged: copy everything again
  }
  return 0;
}

/** Signed-in reviewers and waiting passkey challenges in the database, so every server behind one URL serves every reviewer. */
export function postgresServerState(pool: pg.Pool): ServerState {
  const sessions: SessionStore = {
    async open(reviewer, rights, now) {
      const session = newSession(reviewer, rights, now);
      await pool.query("DELETE FROM twinlock_sessions WHERE expires_ms <= $1", [now]);
      await pool.query("INSERT INTO twinlock_sessions (id_sha256, reviewer, rights, csrf, expires_ms) VALUES ($1, $2, $3, $4, $5)", [
        sha256Hex(session.id),
        reviewer,
        JSON.stringify(rights),
        session.csrf,
        session.expiresAt,
      ]);
      return session;
    },
    async find(id, now): Promise<ReviewerSession | undefined> {
      if (!isSessionId(id)) return undefined;
      const r = await pool.query<{ reviewer: string; rights: string; csrf: string; expires_ms: string }>(
        "SELECT reviewer, rights, csrf, expires_ms FROM twinlock_sessions WHERE id_sha256 = $1",
        [sha256Hex(id)],
      );
      const row = r.rows[0];
      if (!row) return undefined;
      const expiresAt = Number(row.expires_ms);
      if (expiresAt <= now) {
        await pool.query("DELETE FROM twinlock_sessions WHERE id_sha256 = $1", [sha256Hex(id)]);
        return undefined;
      }
      return { id, reviewer: row.reviewer, rights: JSON.parse(row.rights) as string[], csrf: row.csrf, expiresAt };
    },
    async close(id) {
      if (isSessionId(id)) await pool.query("DELETE FROM twinlock_sessions WHERE id_sha256 = $1", [sha256Hex(id)]);
    },
    async closeReviewer(reviewer) {
      await pool.query("DELETE FROM twinlock_sessions WHERE reviewer = $1", [reviewer]);
    },
  };
  return { sessions, decisions: postgresPending(pool, "decision"), signins: postgresSealedSignins(pool) };
}

/**
 * Sign-ins sealed in the browser (as one server does), under a key every
 * server of the store shares, with the used seals in the database: an
 * anonymous start writes nothing, and a seal is taken once through any server.
 */
function postgresSealedSignins(pool: pg.Pool): SealedSignins {
  let key: Promise<Buffer> | undefined;
  const loadKey = async (): Promise<Buffer> => {
    // The first server to ask makes it; every other reads the one that won.
    await pool.query("INSERT INTO twinlock_signin_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [randomBytes(32)]);
    const r = await pool.query<{ key: Buffer }>("SELECT key FROM twinlock_signin_key WHERE id = 1");
    return r.rows[0]?.key as Buffer;
  };
  const used: UsedSeals = {
    async first(mac, expiresAt, now) {
      await pool.query("DELETE FROM twinlock_used_signins WHERE expires_ms <= $1", [now]);
      const r = await pool.query("INSERT INTO twinlock_used_signins (mac, expires_ms) VALUES ($1, $2) ON CONFLICT (mac) DO NOTHING", [
        mac,
        expiresAt,
      ]);
      return r.rowCount === 1;
    },
  };
  return new SealedSignins({
    key: () => {
      key ??= loadKey().catch((error: unknown) => {
        key = undefined;
        throw error;
      });
      return key;
    },
    used,
  });
}

function postgresPending(pool: pg.Pool, kind: "decision"): PendingStore {
  return {
    async add(entry, now): Promise<PendingSignature> {
      const pending: PendingSignature = { ...entry, id: newPendingId(), expiresAt: now + PENDING_MS };
      await pool.query("DELETE FROM twinlock_challenges WHERE expires_ms <= $1", [now]);
      await pool.query(
        "INSERT INTO twinlock_challenges (id, kind, reviewer, request, challenge, at_ms, expires_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [pending.id, kind, pending.reviewer, pending.request, pending.challenge, pending.at.getTime(), pending.expiresAt],
      );
      // Bounded per reviewer, as in one server's memory: her own oldest waiting decisions give way, never another's.
      await pool.query(
        `DELETE FROM twinlock_challenges WHERE kind = $1 AND reviewer = $2 AND id NOT IN
           (SELECT id FROM twinlock_challenges WHERE kind = $1 AND reviewer = $2 ORDER BY at_ms DESC, id LIMIT $3)`,
        [kind, pending.reviewer, MAX_PENDING_PER_REVIEWER],
      );
      return pending;
    },
    async take(id, now): Promise<PendingSignature | undefined> {
      if (!/^[0-9a-f]{32}$/.test(id)) return undefined;
      // DELETE … RETURNING: of two servers taking one challenge, exactly one gets it.
      const r = await pool.query<{ reviewer: string; request: string; challenge: Buffer; at_ms: string; expires_ms: string }>(
        "DELETE FROM twinlock_challenges WHERE id = $1 AND kind = $2 RETURNING reviewer, request, challenge, at_ms, expires_ms",
        [id, kind],
      );
      const row = r.rows[0];
      if (!row || Number(row.expires_ms) <= now) return undefined;
      return {
        id,
        reviewer: row.reviewer,
        request: row.request,
        challenge: row.challenge,
        at: new Date(Number(row.at_ms)),
        expiresAt: Number(row.expires_ms),
      };
    },
  };
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
