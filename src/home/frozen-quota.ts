import { randomBytes } from "node:crypto";
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, type Stats } from "node:fs";
import path from "node:path";
import { ConflictError, IntegrityError, RefusalError, UsageError } from "../errors/errors.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { atomicWriteFile, fsyncDir } from "../store/atomic-write.js";
import { removeLeftoversOfDeadWriters } from "../store/is-process-alive.js";
import { IDENTITY_TAG, identitySuffix, identityTagOf } from "../store/process-start.js";
import { isProcessStopped, monotonicStamp, withQueueLock } from "../store/queue-lock.js";
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
 * run store now, what the freezes under way ahead of it reserved, and what
 * the freezes storing now are about to store (see `reserveFrozenBytes`).
 * Plain data, so a worker thread can compute it.
 */
export interface FrozenStanding {
  quota: FrozenQuota;
  runId?: string;
  homeUsed: number;
  runUsed: number;
  /** The sha256 of each frozen file the run already uses. */
  runRefs: string[];
  /** Bytes the freezes under way ahead of this one reserved in the home, and for this run (every other one without `mine`). */
  reservedHome: number;
  reservedRun: number;
  /** The new bytes other freezes are storing at this moment (named by their claims, not yet in the home). */
  storing: StoringClaim[];
}

/** One file another freeze is storing: its bytes, whether that freeze is ahead of this one, and its process. */
export interface StoringClaim {
  sha256: string;
  bytes: number;
  ahead: boolean;
  pid: number;
}

/**
 * The home's and the run's standing now (every blob is listed: run it off
 * the server's thread). `mine` is the caller's own reservation: not counted
 * against itself, and what is reserved counts only the reservations ahead of
 * it. The reservations are read before the blobs are listed, so a freeze that
 * stored its bytes and left in between is counted in what the home holds.
 */
export function frozenStanding(home: GateHome, runId?: string, mine?: string): FrozenStanding {
  const others = liveReservations(home).filter((r) => r.file !== mine);
  const myOrder = mine === undefined ? undefined : reservationOrder(mine);
  const isAhead = (r: Reservation) => myOrder === undefined || r.order < myOrder;
  const reserved = others.filter(isAhead);
  const blobs = listBlobs(home);
  const stored = new Set(blobs.map((b) => b.sha256));
  const storing: StoringClaim[] = [];
  for (const r of others)
    for (const [sha256, bytes] of r.storing) if (!stored.has(sha256)) storing.push({ sha256, bytes, ahead: isAhead(r), pid: r.pid });
  return {
    quota: frozenQuota(home),
    runId,
    homeUsed: blobs.reduce((s, b) => s + b.stored, 0),
    runUsed: runId === undefined ? 0 : runFrozenUsage(home, runId),
    runRefs: runId === undefined ? [] : [...(runBlobRefs(home, runId) ?? [])],
    reservedHome: reserved.reduce((s, r) => s + r.bytes, 0),
    reservedRun: runId === undefined ? 0 : reserved.filter((r) => r.run_id === runId).reduce((s, r) => s + r.bytes, 0),
    storing,
  };
}

/** What a freeze may still store, and the refusal when it would store more. */
export interface FrozenBudget {
  /**
   * Refuse, before anything is copied, a freeze whose files alone (as stored) pass a limit, or do with what the
   * freezes under way ahead of it reserved: no file already stored could make it fit.
   */
  precheck(incoming: number): void;
  /**
   * Count one file once its sha256 is known: toward the home unless the home already stores those bytes, toward
   * the run unless the run already uses them (a re-freeze of unchanged bytes costs nothing); refuse past a limit.
   */
  add(sha256: string, bytes: number): void;
  /**
   * Refuse when the home cannot hold what it stores, `storing` bytes other freezes are storing now, and the
   * bytes `add` counted toward it.
   */
  requireHomeRoom(storing: number): void;
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
  const reservedBy = (n: number) => (n > 0 ? ` (and freezes under way reserved ${formatBytes(n)})` : "");
  const refuse = (byRun: boolean, incoming: number, underWay: string): never => {
    const where = quota.source === "the default" ? "the default; set it in the home's settings.json" : `set in ${quota.source}`;
    throw new RefusalError(
      byRun
        ? `the freeze would store ${formatBytes(incoming)} of frozen files for run ${runId}, which already uses ${formatBytes(runUsed)}${underWay}, over the limit of ${formatBytes(quota.perRun)} per run (frozen_bytes_per_run, ${where}); keep bulky evidence out of the handoff and cite it by digest`
        : `the freeze would store ${formatBytes(incoming)} of frozen files in ${home.dir}, which already holds ${formatBytes(homeUsed)}${underWay}, over the limit of ${formatBytes(quota.perHome)} per gate home (frozen_bytes_per_home, ${where}); run \`twinlock home gc\` to collect frozen files no run uses, or raise the limit`,
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
      if (standing.reservedRun + incoming > perRun) refuse(true, incoming, reservedBy(standing.reservedRun));
      if (standing.reservedHome + incoming > quota.perHome) refuse(false, incoming, reservedBy(standing.reservedHome));
    },
    add(sha256, bytes) {
      if (counted.has(sha256)) return;
      counted.add(sha256);
      if (runRefs !== undefined && !runRefs.has(sha256)) {
        toRun += bytes;
        if (runUsed + toRun > perRun) refuse(true, toRun, "");
      }
      if (!existsSync(path.join(home.dir, "blobs", sha256.slice(0, 2), sha256))) {
        toHome += bytes;
        if (homeUsed + toHome > quota.perHome) refuse(false, toHome, "");
      }
    },
    requireHomeRoom(storing) {
      if (homeUsed + storing + toHome > quota.perHome)
        refuse(false, toHome, storing > 0 ? ` (and freezes under way are storing ${formatBytes(storing)})` : "");
    },
  };
}

/**
 * Whether a decided freeze stores its files now (`store`), or waits for a
 * freeze behind it (`waitFor`, its process) that is storing at the same
 * moment; refused when its new bytes do not fit beside what the home holds
 * and what the freezes ahead of it are storing. Every freeze storing names
 * its new bytes (its claim) before it looks, and stores only when they fit
 * beside every claim it sees: of any freezes that store together, the one
 * that looked last saw all the others' claims (or their bytes in the home,
 * as a claim is withdrawn only once its bytes are stored), so together
 * they stay within the limit. A freeze ahead never gives way to one behind
 * it, and one behind gives way to one ahead, so of two racing for the last
 * bytes exactly one stores them, and neither waits for a lock.
 */
export function decideKeep(
  home: GateHome,
  runId: string | undefined,
  standing: FrozenStanding,
  files: ReadonlyArray<{ sha256: string; stored: number }>,
): { store: true } | { store: false; waitFor: number } {
  const budget = frozenBudget(home, runId, standing);
  for (const f of files) budget.add(f.sha256, f.stored);
  const own = new Set(files.map((f) => f.sha256));
  const storing = (aheadOnly: boolean) => {
    const seen = new Set(own);
    let n = 0;
    for (const c of standing.storing)
      if ((!aheadOnly || c.ahead) && !seen.has(c.sha256)) {
        seen.add(c.sha256);
        n += c.bytes;
      }
    return n;
  };
  try {
    budget.requireHomeRoom(storing(false));
    return { store: true };
  } catch (error) {
    // Only the freezes behind this one stand in its way: they give way to it (or store first, and are then counted).
    try {
      budget.requireHomeRoom(storing(true));
    } catch (refusal) {
      throw namingStoppedClaimant(
        refusal,
        standing.storing.filter((c) => c.ahead && !own.has(c.sha256)),
      );
    }
    const behind = standing.storing.find((c) => !c.ahead && !own.has(c.sha256));
    if (!behind) throw error;
    return { store: false, waitFor: behind.pid };
  }
}

/**
 * A quota refusal that also names a stopped process among the freezes whose claims it counted: its share stays
 * claimed until it resumes or dies (it may store its bytes the moment it resumes), and the person can free it.
 */
function namingStoppedClaimant(refusal: unknown, claims: readonly StoringClaim[]): unknown {
  if (!(refusal instanceof RefusalError)) return refusal;
  const pid = [...new Set(claims.map((c) => c.pid))].find((p) => isProcessStopped(p));
  if (pid === undefined) return refusal;
  return new RefusalError(
    `${refusal.message}; process ${pid}, whose freeze is storing some of those bytes, is stopped: resume it (kill -CONT ${pid}) or kill it, then run the command again`,
    { ...refusal.details, pid, stopped: true },
    { cause: refusal },
  );
}

/**
 * The refusal of a freeze that waited as long as a writer waits for a lock (`queueWaitMs`) for the freeze of process
 * `pid`, storing at the same moment bytes that do not fit beside its own. A stopped process is named as such: its
 * claim stays until it resumes or dies, since it may store its bytes the moment it resumes.
 */
export function storingRefusal(home: GateHome, pid: number): ConflictError {
  const stopped = isProcessStopped(pid);
  const error = new ConflictError(
    stopped
      ? `another freeze in ${home.dir}, of stopped process ${pid}, is storing frozen files that leave no room under the home's limit (frozen_bytes_per_home) for this freeze's; resume it (kill -CONT ${pid}) or kill it, then run the command again`
      : `another freeze in ${home.dir} (pid ${pid}) is storing frozen files that leave no room under the home's limit (frozen_bytes_per_home) for this freeze's; wait for it to finish, then run the command again`,
    { retryable: true, code: "LOCKED" },
  );
  Object.assign(error.details, { quota: "frozen_bytes_per_home", pid, stopped });
  return error;
}

/**
 * `quota-PID-STAMP-TOKEN-TAG.json`: STAMP the monotonic clock (ns, 20 digits) read just before the reservation was
 * made, TAG the freeze's start time and boot (see IDENTITY_TAG; absent where there is no /proc, and in reservations of
 * older versions), so a reservation of a freeze that died is not kept by another process given its PID since.
 */
const RESERVATION = new RegExp(`^(\\d{1,10})-(\\d{20})-([0-9a-f]{12})(?:-(?<tag>${IDENTITY_TAG}))?\\.json$`);

interface Reservation {
  file: string;
  pid: number;
  /** STAMP-TOKEN: the order of reservations (earlier ahead), the token breaking a tie. */
  order: string;
  run_id?: string;
  bytes: number;
  blobs: string[];
  /** The new bytes the freeze is storing, by sha256. */
  storing: Array<[string, number]>;
}

function reservationOrder(file: string): string {
  const name = path.basename(file);
  const m = name.startsWith("quota-") ? RESERVATION.exec(name.slice(6)) : null;
  if (!m) throw new Error(`internal error: ${name} is not a quota reservation`);
  return `${m[2]}-${m[3]}`;
}

/** The reservations of freezes under way (`tmp/quota-PID-STAMP-TOKEN-TAG.json`); one of a process no longer alive is removed. */
function liveReservations(home: GateHome): Reservation[] {
  const tmp = homeSubdir(home, "tmp");
  removeLeftoversOfDeadWriters(tmp, "quota-", RESERVATION);
  const found: Reservation[] = [];
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return found;
  }
  const sha = (b: unknown): b is string => typeof b === "string" && /^[0-9a-f]{64}$/.test(b);
  const size = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  for (const name of names) {
    const m = name.startsWith("quota-") ? RESERVATION.exec(name.slice(6)) : null;
    if (!m) continue;
    const file = path.join(tmp, name);
    try {
      const doc = JSON.parse(readFileSync(file, "utf8")) as { run_id?: unknown; bytes?: unknown; blobs?: unknown; storing?: unknown };
      const blobs = Array.isArray(doc.blobs) ? doc.blobs.filter(sha) : [];
      const storing = Array.isArray(doc.storing)
        ? doc.storing.filter((e): e is [string, number] => Array.isArray(e) && sha(e[0]) && size(e[1]))
        : [];
      if (size(doc.bytes))
        found.push({
          file,
          pid: Number(m[1]),
          order: `${m[2]}-${m[3]}`,
          bytes: doc.bytes,
          blobs,
          storing,
          ...(typeof doc.run_id === "string" ? { run_id: doc.run_id } : {}),
        });
    } catch {
      // Gone meanwhile (its freeze ended); a reservation is renamed into place whole, so never half written.
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
   * Name the files the freeze is about to store, with the bytes each takes (durably, before it stores them): every
   * freeze storing at the same moment counts them (see `decideKeep`), and the collector keeps every blob a live
   * reservation names, so bytes stored before the run's record of them is written are never collected.
   */
  claim(files: ReadonlyArray<{ sha256: string; stored: number }>): void;
  release(): void;
}

/**
 * Reserve `incoming` bytes (what the freeze's files take on disk) against
 * the run's and the home's limits, with no lock: the reservation is made
 * first (one file, renamed into place whole, named by the monotonic clock
 * read just before), then the reservations ahead of it are counted, so of
 * freezes at once at least the first goes on, and a reservation whose bytes
 * do not fit beside those ahead is refused and removed. The reservation is
 * what refuses early a copy that could not be kept; what is stored is held
 * to the limit exactly when each freeze keeps its bytes (`decideKeep`).
 * `standing` computes what the home holds now (listing every blob: the
 * server runs it off its thread). A reservation of a process no longer
 * alive is removed by the next freeze that looks.
 */
export async function reserveFrozenBytes(
  home: GateHome,
  runId: string | undefined,
  incoming: number,
  standing: (home: GateHome, runId: string | undefined, mine: string) => FrozenStanding | Promise<FrozenStanding> = frozenStanding,
): Promise<FrozenReservation> {
  const tmp = homeSubdir(home, "tmp");
  const tag = identityTagOf();
  const file = path.join(
    tmp,
    `quota-${process.pid}-${monotonicStamp()}-${randomBytes(6).toString("hex")}${tag === undefined ? "" : `-${tag}`}.json`,
  );
  const claim = { ...(runId === undefined ? {} : { run_id: runId }), bytes: incoming };
  atomicWriteFile(file, `${JSON.stringify(claim)}\n`, 0o600);
  const release = () => rmSync(file, { force: true });
  let now: FrozenStanding;
  try {
    now = await standing(home, runId, file);
    frozenBudget(home, runId, now).precheck(incoming);
  } catch (error) {
    release();
    throw error;
  }
  return {
    file,
    standing: now,
    claim: (files) => {
      const storing = new Map(files.map((f) => [f.sha256, f.stored] as const));
      const doc = { ...claim, blobs: [...storing.keys()].sort(), storing: [...storing].sort((a, b) => (a[0] < b[0] ? -1 : 1)) };
      atomicWriteFile(file, `${JSON.stringify(doc)}\n`, 0o600);
    },
    release,
  };
}

/**
 * Run `fn` holding the home's lock of its frozen files (`blobs.queue/`),
 * which only the collector and `import` take: a freeze reserves and stores
 * its bytes with no lock (see `reserveFrozenBytes`, `decideKeep`), so a
 * freeze the agent stops holds no other run's freeze up.
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
 * The sha256 of every blob some run or some freeze under way uses, read in
 * this order: a freeze's reservation names its blobs until its run's record
 * of them is written, so reading the reservations first and the records
 * after never misses a freeze that finished in between.
 */
function blobsInUse(
  home: GateHome,
  legacyRefs: (runId: string) => readonly ManifestEntry[],
): {
  used: Set<string>;
  runs: Array<{ run_id: string; bytes: number }>;
} {
  const used = new Set<string>();
  for (const r of liveReservations(home)) for (const sha of r.blobs) used.add(sha);
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
  const runs: Array<{ run_id: string; bytes: number }> = [];
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
  return { used, runs };
}

/** `tmp/gc-PID-TOKEN[-TAG]/`: the blobs a collector moved aside before it deletes them. */
const ASIDE = new RegExp(`^(\\d{1,10})-[0-9a-f]{12}(?:-(?<tag>${IDENTITY_TAG}))?$`);

/** Put back every blob a collector that died moved aside (it may have been taken up meanwhile), then remove its folder. */
function restoreDeadCollectors(home: GateHome): void {
  removeLeftoversOfDeadWriters(homeSubdir(home, "tmp"), "gc-", ASIDE, (aside) => {
    let names: string[] = [];
    try {
      names = readdirSync(aside);
    } catch {
      // Gone.
    }
    const touched = new Set<string>();
    for (const sha of names) {
      if (!/^[0-9a-f]{64}$/.test(sha)) continue;
      const target = path.join(home.dir, "blobs", sha.slice(0, 2), sha);
      try {
        mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
        linkSync(path.join(aside, sha), target);
        touched.add(path.dirname(target));
      } catch {
        // There already (stored again meanwhile), or not restorable: the next collection judges it.
      }
    }
    for (const dir of touched) fsyncDir(dir);
    rmSync(aside, { recursive: true, force: true });
  });
}

/**
 * Delete every frozen file no run of the home uses (SPEC §9 frozen bytes,
 * garbage collection), under the blobs lock (one collector at a time; an
 * import waits) but with no lock a freeze waits for. What a run uses is the
 * home's own record (`runs/RUN_ID.blobs.json`); a run recorded before that
 * record existed is read from its run file, verified against its checkpoint;
 * a run the home cannot place (its run file gone or refused) stops the
 * collection before anything is deleted. The blobs are listed before what
 * uses them is read, so bytes a freeze stored are named (by its reservation,
 * then its run's record) by then; each blob to delete is first moved aside,
 * and what uses the blobs read again: one a freeze took up meanwhile (linked
 * into its copy before its reservation named it) is put back, and a freeze
 * that finds a blob it needs missing links it again from its own copy.
 */
export async function collectFrozenGarbage(
  home: GateHome,
  legacyRefs: (runId: string) => readonly ManifestEntry[],
): Promise<CollectReport> {
  if (home.shared) throw new RefusalError(`${home.dir} is a team store's copy of its frozen files; nothing is collected there`);
  return withBlobsLock(home, () => {
    restoreDeadCollectors(home);
    const blobs = listBlobs(home);
    const { used, runs } = blobsInUse(home, legacyRefs);
    const unused = blobs.filter((b) => !used.has(b.sha256));
    const collected = { blobs: 0, bytes: 0 };
    const remaining = { blobs: 0, bytes: 0 };
    for (const b of blobs)
      if (used.has(b.sha256)) {
        remaining.blobs++;
        remaining.bytes += b.stored;
      }
    const touched = new Set<string>();
    if (unused.length > 0) {
      const aside = path.join(homeSubdir(home, "tmp"), `gc-${process.pid}-${randomBytes(6).toString("hex")}${identitySuffix()}`);
      mkdirSync(aside, { mode: 0o700 });
      const moved: typeof unused = [];
      let stillUsed: Set<string>;
      try {
        for (const blob of unused) {
          try {
            renameSync(blob.file, path.join(aside, blob.sha256));
            moved.push(blob);
            touched.add(path.dirname(blob.file));
          } catch {
            // Already gone.
          }
        }
        stillUsed = blobsInUse(home, legacyRefs).used;
      } catch (error) {
        stillUsed = new Set(moved.map((b) => b.sha256));
        putBack(moved, stillUsed, aside);
        rmSync(aside, { recursive: true, force: true });
        for (const dir of touched) fsyncDir(dir);
        throw error;
      }
      putBack(moved, stillUsed, aside);
      for (const blob of moved) {
        const tally = stillUsed.has(blob.sha256) ? remaining : collected;
        tally.blobs++;
        tally.bytes += blob.stored;
      }
      rmSync(aside, { recursive: true, force: true });
    }
    for (const dir of touched) fsyncDir(dir);
    runs.sort((a, b) => b.bytes - a.bytes);
    return { collected, remaining, quota: frozenQuota(home), runs };
  });
}

/** Link back into the store each moved-aside blob that `used` names (one stored again meanwhile stays as it is). */
function putBack(moved: ReadonlyArray<{ sha256: string; file: string }>, used: ReadonlySet<string>, aside: string): void {
  for (const blob of moved) {
    if (!used.has(blob.sha256)) continue;
    try {
      linkSync(path.join(aside, blob.sha256), blob.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}
