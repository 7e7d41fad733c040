import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, type Stats, unlinkSync } from "node:fs";
import path from "node:path";
import { IntegrityError, RefusalError, UsageError } from "../errors/errors.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { atomicWriteFile, fsyncDir } from "../store/atomic-write.js";
import { removeLeftoversOfDeadWriters } from "../store/is-process-alive.js";
import { withQueueLock } from "../store/queue-lock.js";
import { type GateHome, homeSubdir } from "./gate-home.js";

/**
 * The gate home's quota on frozen bytes (the handoff copies it keeps in
 * `blobs/`), counted as the bytes the files really take on disk (a sparse
 * file's holes take none). Defaults: realistic handoffs are a plan, a report
 * and a few records (kilobytes to a few megabytes); the largest evidence
 * twinlock expects to be frozen whole is well under a gigabyte, and a run
 * re-frozen tens of times stays under 2 GiB. A home holding many runs' worth
 * stays under 20 GiB. Set other limits in `settings.json` in the home.
 */
export const DEFAULT_FROZEN_BYTES_PER_RUN = 2 * 1024 ** 3;
export const DEFAULT_FROZEN_BYTES_PER_HOME = 20 * 1024 ** 3;

export interface FrozenQuota {
  perRun: number;
  perHome: number;
  /** Where the limits come from, for messages. */
  source: string;
}

const SETTINGS_FORMAT = "twinlock-home-settings/1";
const MAX_SETTINGS_BYTES = 64 * 1024;

/** The home's limits: `settings.json` in the home when it is there, else the defaults. */
export function frozenQuota(home: GateHome): FrozenQuota {
  const file = path.join(home.dir, "settings.json");
  let text: string;
  try {
    const stat = lstatSync(file);
    if (!stat.isFile() || stat.size > MAX_SETTINGS_BYTES)
      throw new UsageError(`${file} is not a settings file (a regular file of at most ${MAX_SETTINGS_BYTES} bytes); fix or remove it`, {
        code: "SETTINGS_INVALID",
      });
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      return { perRun: DEFAULT_FROZEN_BYTES_PER_RUN, perHome: DEFAULT_FROZEN_BYTES_PER_HOME, source: "the default" };
    throw new UsageError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code}); fix the gate home's permissions`, {
      code: "HOME_UNREADABLE",
    });
  }
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new UsageError(
      `${file} is not JSON; write {"format": "${SETTINGS_FORMAT}", "frozen_bytes_per_run": N, "frozen_bytes_per_home": N}`,
      { code: "SETTINGS_INVALID" },
    );
  }
  if (doc === null || typeof doc !== "object" || doc.format !== SETTINGS_FORMAT)
    throw new UsageError(`${file} is not a twinlock settings file; its "format" must be "${SETTINGS_FORMAT}"`, {
      code: "SETTINGS_INVALID",
    });
  for (const key of Object.keys(doc))
    if (!["format", "frozen_bytes_per_run", "frozen_bytes_per_home"].includes(key))
      throw new UsageError(
        `${file} has an unknown setting ${JSON.stringify(key.slice(0, 80))}; known: frozen_bytes_per_run, frozen_bytes_per_home`,
        { code: "SETTINGS_INVALID" },
      );
  const limit = (key: string, fallback: number): number => {
    const v = doc[key];
    if (v === undefined) return fallback;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
      throw new UsageError(`${file}: ${key} must be a whole number of bytes, not ${JSON.stringify(v)}`, { code: "SETTINGS_INVALID" });
    return v;
  };
  return {
    perRun: limit("frozen_bytes_per_run", DEFAULT_FROZEN_BYTES_PER_RUN),
    perHome: limit("frozen_bytes_per_home", DEFAULT_FROZEN_BYTES_PER_HOME),
    source: file,
  };
}

/** The bytes a file really takes on disk: its allocated blocks (never more than its size rounded up to 4 KiB). */
export function storedBytes(stat: Stats): number {
  const ceiling = Math.ceil(stat.size / 4096) * 4096;
  return typeof stat.blocks === "number" ? Math.min(stat.blocks * 512, ceiling) : stat.size;
}

/** Bytes as messages give them: "1.5 GiB", "512 KiB", "37 bytes". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} byte${n === 1 ? "" : "s"}`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 10 ? Math.round(v) : Math.round(v * 10) / 10} ${units[u]}`;
}

/** Every blob in the home with the bytes it takes on disk. */
function listBlobs(home: GateHome): Array<{ sha256: string; file: string; stored: number }> {
  const root = path.join(home.dir, "blobs");
  const found: Array<{ sha256: string; file: string; stored: number }> = [];
  let prefixes: string[];
  try {
    prefixes = readdirSync(root);
  } catch {
    return found;
  }
  for (const prefix of prefixes) {
    if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
    let names: string[];
    try {
      names = readdirSync(path.join(root, prefix));
    } catch {
      continue;
    }
    for (const name of names) {
      if (!/^[0-9a-f]{64}$/.test(name) || !name.startsWith(prefix)) continue;
      const file = path.join(root, prefix, name);
      try {
        const stat = lstatSync(file);
        if (stat.isFile()) found.push({ sha256: name, file, stored: storedBytes(stat) });
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return found;
}

/** The frozen bytes the home holds, as stored on disk. */
export function homeFrozenUsage(home: GateHome): { bytes: number; blobs: number } {
  const blobs = listBlobs(home);
  return { bytes: blobs.reduce((s, b) => s + b.stored, 0), blobs: blobs.length };
}

const REFS_FORMAT = "twinlock-run-blobs/1";

function refsFile(home: GateHome, runId: string): string {
  if (!/^run_[0-9a-f]{16}$/.test(runId)) throw new UsageError(`run ID ${JSON.stringify(runId)} is not a twinlock run ID`);
  return path.join(home.dir, "runs", `${runId}.blobs.json`);
}

/** The sha256 of every frozen file the home recorded for a run (`runs/RUN_ID.blobs.json`), or undefined when none was recorded. */
export function runBlobRefs(home: GateHome, runId: string): Set<string> | undefined {
  let text: string;
  try {
    text = readFileSync(refsFile(home, runId), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UsageError(
      `cannot read ${refsFile(home, runId)} (${(error as NodeJS.ErrnoException).code}); fix the gate home's permissions`,
      { code: "HOME_UNREADABLE" },
    );
  }
  try {
    const doc = JSON.parse(text) as { format?: unknown; blobs?: unknown };
    if (doc.format === REFS_FORMAT && Array.isArray(doc.blobs) && doc.blobs.every((b) => typeof b === "string" && /^[0-9a-f]{64}$/.test(b)))
      return new Set(doc.blobs as string[]);
  } catch {
    // Damaged: said below.
  }
  throw new IntegrityError(`${refsFile(home, runId)} is damaged; the gate home cannot tell which frozen files run ${runId} uses`, {
    code: "HOME_DAMAGED",
  });
}

/** Record in the home that a run uses these frozen files (before the run file names them; idempotent). */
export function recordRunBlobs(home: GateHome, runId: string, files: readonly ManifestEntry[]): void {
  const known = runBlobRefs(home, runId) ?? new Set<string>();
  const before = known.size;
  for (const f of files) known.add(f.sha256);
  if (known.size === before && before > 0) return;
  homeSubdir(home, "runs");
  atomicWriteFile(refsFile(home, runId), `${JSON.stringify({ format: REFS_FORMAT, run_id: runId, blobs: [...known].sort() })}\n`, 0o600);
}

/** The bytes (as stored) of the frozen files a run uses. */
export function runFrozenUsage(home: GateHome, runId: string): number {
  const refs = runBlobRefs(home, runId);
  if (!refs) return 0;
  let total = 0;
  for (const sha of refs) {
    try {
      total += storedBytes(lstatSync(path.join(home.dir, "blobs", sha.slice(0, 2), sha)));
    } catch {
      // Missing: it takes no space (reading the run names it).
    }
  }
  return total;
}

/**
 * Where a freeze stands against the quota: the limits, what the home and the
 * run store now, and what freezes under way have reserved (see
 * `reserveFrozenBytes`). Plain data, so a worker thread can compute it.
 */
export interface FrozenStanding {
  quota: FrozenQuota;
  runId?: string;
  homeUsed: number;
  runUsed: number;
  /** The sha256 of each frozen file the run already uses. */
  runRefs: string[];
  /** Bytes other freezes under way reserved in the home, and for this run. */
  reservedHome: number;
  reservedRun: number;
}

/**
 * The home's and the run's standing now (every blob is listed: run it off
 * the server's thread). `except` is the caller's own reservation, not
 * counted against itself.
 */
export function frozenStanding(home: GateHome, runId?: string, except?: string): FrozenStanding {
  const reserved = liveReservations(home).filter((r) => r.file !== except);
  return {
    quota: frozenQuota(home),
    runId,
    homeUsed: homeFrozenUsage(home).bytes,
    runUsed: runId === undefined ? 0 : runFrozenUsage(home, runId),
    runRefs: runId === undefined ? [] : [...(runBlobRefs(home, runId) ?? [])],
    reservedHome: reserved.reduce((s, r) => s + r.bytes, 0),
    reservedRun: runId === undefined ? 0 : reserved.filter((r) => r.run_id === runId).reduce((s, r) => s + r.bytes, 0),
  };
}

/** What a freeze may still store, and the refusal when it would store more. */
export interface FrozenBudget {
  /**
   * Refuse, before anything is copied, a freeze whose files alone (as stored) pass a limit, or do with what freezes
   * under way reserved: no file already stored could make it fit.
   */
  precheck(incoming: number): void;
  /**
   * Count one file once its sha256 is known: toward the home unless the home already stores those bytes, toward
   * the run unless the run already uses them (a re-freeze of unchanged bytes costs nothing); refuse past a limit.
   */
  add(sha256: string, bytes: number): void;
}

/** The budget of one freeze: what is left under the run's and the home's limits, from its standing. */
export function frozenBudget(home: GateHome, runId?: string, standing: FrozenStanding = frozenStanding(home, runId)): FrozenBudget {
  const { quota } = standing;
  const { homeUsed, runUsed } = standing;
  const runRefs = runId === undefined ? undefined : new Set(standing.runRefs);
  const perRun = runId === undefined ? Number.POSITIVE_INFINITY : quota.perRun;
  const counted = new Set<string>();
  let toHome = 0;
  let toRun = 0;
  const underWay = (n: number) => (n > 0 ? ` (and freezes under way reserved ${formatBytes(n)})` : "");
  const refuse = (byRun: boolean, incoming: number): never => {
    const where = quota.source === "the default" ? "the default; set it in the home's settings.json" : `set in ${quota.source}`;
    throw new RefusalError(
      byRun
        ? `the freeze would store ${formatBytes(incoming)} of frozen files for run ${runId}, which already uses ${formatBytes(runUsed)}${underWay(standing.reservedRun)}, over the limit of ${formatBytes(quota.perRun)} per run (frozen_bytes_per_run, ${where}); keep bulky evidence out of the handoff and cite it by digest`
        : `the freeze would store ${formatBytes(incoming)} of frozen files in ${home.dir}, which already holds ${formatBytes(homeUsed)}${underWay(standing.reservedHome)}, over the limit of ${formatBytes(quota.perHome)} per gate home (frozen_bytes_per_home, ${where}); run \`twinlock home gc\` to collect frozen files no run uses, or raise the limit`,
      {
        code: "QUOTA_EXCEEDED",
        quota: byRun ? "frozen_bytes_per_run" : "frozen_bytes_per_home",
        limit: byRun ? quota.perRun : quota.perHome,
        usage: byRun ? runUsed : homeUsed,
        incoming,
      },
    );
  };
  return {
    precheck(incoming) {
      // What is stored already may be these very bytes (a re-freeze costs nothing): only what freezes under way reserved counts.
      if (standing.reservedRun + incoming > perRun) refuse(true, incoming);
      if (standing.reservedHome + incoming > quota.perHome) refuse(false, incoming);
    },
    add(sha256, bytes) {
      if (counted.has(sha256)) return;
      counted.add(sha256);
      if (runRefs !== undefined && !runRefs.has(sha256)) {
        toRun += bytes;
        if (runUsed + toRun > perRun) refuse(true, toRun);
      }
      if (!existsSync(path.join(home.dir, "blobs", sha256.slice(0, 2), sha256))) {
        toHome += bytes;
        if (homeUsed + toHome > quota.perHome) refuse(false, toHome);
      }
    },
  };
}

const RESERVATION = /^(\d+)-[0-9a-f]{12}\.json$/;

/** The reservations of freezes under way (`tmp/quota-PID-ID.json`); one of a process no longer alive is removed. */
function liveReservations(home: GateHome): Array<{ file: string; run_id?: string; bytes: number; blobs: string[] }> {
  const tmp = homeSubdir(home, "tmp");
  removeLeftoversOfDeadWriters(tmp, "quota-", RESERVATION);
  const found: Array<{ file: string; run_id?: string; bytes: number; blobs: string[] }> = [];
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return found;
  }
  for (const name of names) {
    if (!name.startsWith("quota-") || !RESERVATION.test(name.slice(6))) continue;
    const file = path.join(tmp, name);
    try {
      const doc = JSON.parse(readFileSync(file, "utf8")) as { run_id?: unknown; bytes?: unknown; blobs?: unknown };
      const blobs = Array.isArray(doc.blobs) ? doc.blobs.filter((b): b is string => typeof b === "string" && /^[0-9a-f]{64}$/.test(b)) : [];
      if (typeof doc.bytes === "number" && Number.isSafeInteger(doc.bytes) && doc.bytes >= 0)
        found.push({ file, bytes: doc.bytes, blobs, ...(typeof doc.run_id === "string" ? { run_id: doc.run_id } : {}) });
    } catch {
      // Gone meanwhile (its freeze ended), or half written by a freeze that died: its process is checked next time.
    }
  }
  return found;
}

/** A freeze's claim on the quota while it copies: released (its file removed) when the freeze ends, kept or not. */
export interface FrozenReservation {
  /** The reservation's file in the home's scratch folder. */
  file: string;
  standing: FrozenStanding;
  /**
   * Name the blobs the freeze is about to store (durably, before it stores them): the collector keeps every blob a
   * live reservation names, so bytes stored before the run's record of them is written are never collected.
   */
  protect(sha256s: readonly string[]): void;
  release(): void;
}

/**
 * Reserve `incoming` bytes (what the freeze's files take on disk) against
 * the run's and the home's limits, under the blobs lock: freezes at once
 * each see the others' reservations, so their copies together stay within
 * a limit (and the check as each keeps its bytes, `frozenBudget` from a
 * standing taken under the lock then, holds what is stored to it). The
 * reservation is refused, and nothing written, when the bytes do not fit
 * beside what is reserved. `standing` computes what the home holds now
 * (listing every blob: the server runs it off its thread).
 */
export async function reserveFrozenBytes(
  home: GateHome,
  runId: string | undefined,
  incoming: number,
  standing: (home: GateHome, runId?: string) => FrozenStanding | Promise<FrozenStanding> = frozenStanding,
): Promise<FrozenReservation> {
  return withBlobsLock(home, async () => {
    const now = await standing(home, runId);
    frozenBudget(home, runId, now).precheck(incoming);
    const file = path.join(homeSubdir(home, "tmp"), `quota-${process.pid}-${randomBytes(6).toString("hex")}.json`);
    const claim = { ...(runId === undefined ? {} : { run_id: runId }), bytes: incoming };
    atomicWriteFile(file, `${JSON.stringify(claim)}\n`, 0o600);
    return {
      file,
      standing: now,
      protect: (blobs) => atomicWriteFile(file, `${JSON.stringify({ ...claim, blobs: [...new Set(blobs)].sort() })}\n`, 0o600),
      release: () => rmSync(file, { force: true }),
    };
  });
}

/**
 * Run `fn` holding the home's lock of its frozen files (`blobs.queue/`):
 * taken by a freeze only to reserve its bytes against the quota and, once
 * decided, to check the quota against what the home stores now and store
 * them (never across its copy, nor while it waits for its run's lock: a
 * freeze the agent stops holds it for no other run), and by the collector
 * for its whole pass. The collector keeps every blob a live reservation
 * names (see `FrozenReservation.protect`), so bytes a freeze stored before
 * its event is written are never collected.
 */
export async function withBlobsLock<T>(home: GateHome, fn: () => T | Promise<T>): Promise<T> {
  return withQueueLock(path.join(home.dir, "blobs.queue"), fn, `the frozen files of ${home.dir}`);
}

export interface CollectReport {
  collected: { blobs: number; bytes: number };
  remaining: { blobs: number; bytes: number };
  quota: FrozenQuota;
  /** Each run's use, largest first. */
  runs: Array<{ run_id: string; bytes: number }>;
}

/**
 * Delete every frozen file no run of the home uses (SPEC §9 frozen bytes,
 * garbage collection), under the blobs lock. What a run uses is the home's
 * own record (`runs/RUN_ID.blobs.json`); a run recorded before that record
 * existed is read from its run file, verified against its checkpoint; a run
 * the home cannot place (its run file gone or refused) stops the collection
 * before anything is deleted.
 */
export async function collectFrozenGarbage(
  home: GateHome,
  legacyRefs: (runId: string) => readonly ManifestEntry[],
): Promise<CollectReport> {
  if (home.shared) throw new RefusalError(`${home.dir} is a team store's copy of its frozen files; nothing is collected there`);
  return withBlobsLock(home, () => {
    const used = new Set<string>();
    const runs: Array<{ run_id: string; bytes: number }> = [];
    let names: string[];
    try {
      names = readdirSync(homeSubdir(home, "runs"));
    } catch (error) {
      throw new UsageError(`cannot list the gate home's runs (${(error as NodeJS.ErrnoException).code}); fix its permissions`, {
        code: "HOME_UNREADABLE",
      });
    }
    const ids = new Set<string>();
    for (const name of names) {
      const id = /^(run_[0-9a-f]{16})(?:\.blobs)?\.json$/.exec(name)?.[1];
      if (id) ids.add(id);
    }
    // Bytes a freeze under way stored (or is about to) before its run's record of them is written.
    for (const r of liveReservations(home)) for (const sha of r.blobs) used.add(sha);
    for (const id of ids) {
      let refs = runBlobRefs(home, id);
      if (!refs) {
        let files: readonly ManifestEntry[];
        try {
          files = legacyRefs(id);
        } catch (error) {
          throw new IntegrityError(
            `the gate home cannot tell which frozen files run ${id} uses (${(error as Error).message}); nothing was collected`,
            { code: "HOME_DAMAGED" },
          );
        }
        recordRunBlobs(home, id, files);
        refs = new Set(files.map((f) => f.sha256));
      }
      for (const sha of refs) used.add(sha);
      runs.push({ run_id: id, bytes: runFrozenUsage(home, id) });
    }
    const collected = { blobs: 0, bytes: 0 };
    const remaining = { blobs: 0, bytes: 0 };
    const touched = new Set<string>();
    for (const blob of listBlobs(home)) {
      if (used.has(blob.sha256)) {
        remaining.blobs++;
        remaining.bytes += blob.stored;
        continue;
      }
      try {
        unlinkSync(blob.file);
        collected.blobs++;
        collected.bytes += blob.stored;
        touched.add(path.dirname(blob.file));
      } catch {
        // Already gone.
      }
    }
    for (const dir of touched) fsyncDir(dir);
    runs.sort((a, b) => b.bytes - a.bytes);
    return { collected, remaining, quota: frozenQuota(home), runs };
  });
}
