import { createHash, randomBytes } from "node:crypto";
import { closeSync, constants, type FSWatcher, lstatSync, mkdirSync, openSync, readdirSync, unlinkSync, utimesSync, watch } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConflictError, RefusalError, UsageError } from "../errors/errors.js";
import { isWriterAlive } from "./is-process-alive.js";
import { IDENTITY_TAG, identityTagOf, statFields } from "./process-start.js";

/** How long a writer waits in the queue before giving up (unless `TWINLOCK_LOCK_WAIT_MS` or the caller says otherwise). */
export const QUEUE_WAIT_MS = 60_000;
/** The longest wait `TWINLOCK_LOCK_WAIT_MS` may ask for (ten minutes). */
const MAX_WAIT_MS = 600_000;

/**
 * How long this process's writers wait in a queue: `TWINLOCK_LOCK_WAIT_MS` when it is a whole number of milliseconds
 * from 1 to 600000 (a person who would rather be told sooner, a test), else QUEUE_WAIT_MS. It only changes how long
 * this process waits: a waiter never holds anything, and the holder it waits for is not hurried.
 */
export function queueWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.TWINLOCK_LOCK_WAIT_MS;
  if (given === undefined || !/^[1-9][0-9]{0,5}$/.test(given)) return QUEUE_WAIT_MS;
  return Math.min(Number(given), MAX_WAIT_MS);
}

/** An entry of another host not refreshed for this long is dead (a holder or waiter refreshes its own every 2 s). */
const STALE_MS = 10_000;
const REFRESH_MS = 2_000;

/** This host, as entry names carry it (hashed: a host name may hold any character). */
const HOST = createHash("sha256").update(os.hostname()).digest("hex").slice(0, 8);

/**
 * An entry of the queue folder: `t-STAMP-HOST-PID-TOKEN-TAG`, a writer's ticket
 * (STAMP the monotonic clock, in nanoseconds, read just before the ticket was
 * made; TAG the writer's start time and boot, see IDENTITY_TAG, absent where
 * there is no /proc and in tickets of older versions), and `h-` + the same
 * tail while that writer holds the lock.
 */
interface Entry {
  name: string;
  kind: "t" | "h";
  /** STAMP-HOST-PID-TOKEN: the ticket's place in the queue (fixed width, so compared as text). */
  key: string;
  host: string;
  pid: number;
  /** The writer's identity tag, when its ticket records one: a process with its PID but another tag is not it. */
  tag: string | undefined;
}

/** Fields of fixed classes split by `-`, which none of them holds: matched in one pass, no backtracking. */
const ENTRY = new RegExp(`^([th])-((\\d{20})-([0-9a-f]{8})-(\\d{1,10})-[0-9a-f]{16}(?:-(${IDENTITY_TAG}))?)$`);
/** The longest entry name (with its tag): anything longer is not an entry, and is not matched at all. */
const MAX_ENTRY_NAME = 2 + 20 + 1 + 8 + 1 + 10 + 1 + 16 + 1 + 20 + 1 + 8;

function parseEntry(name: string): Entry | undefined {
  const m = name.length <= MAX_ENTRY_NAME ? ENTRY.exec(name) : null;
  if (!m) return undefined;
  return { name, kind: m[1] as "t" | "h", key: m[2] as string, host: m[4] as string, pid: Number(m[5]), tag: m[6] };
}

/** Ticket order: the stamp (the moment the writer asked), then host, pid and token (a tie broken by process). */
function before(a: Entry, b: Entry): boolean {
  return a.key < b.key;
}

/** The monotonic clock now, as a ticket (and a quota reservation) carries it: one clock for every process of this host, never set back. */
export function monotonicStamp(): string {
  return process.hrtime.bigint().toString().padStart(20, "0");
}

/**
 * How long a waiter sleeps at most between looks at the queue while it watches the folder: a holder that leaves removes
 * its ticket (and those of its successors killed while they waited), which wakes its first live successor at once; the
 * look is for what makes no such change (a holder killed on this host, whose ticket stays until a waiter finds its
 * process gone, or an entry of another host, unseen by this host's watch).
 */
const WATCHED_LOOK_MS = 100;
/** The same, where the folder cannot be watched (no inotify, too many watches): the look is the only way to know. */
const UNWATCHED_LOOK_MS = 8;

/** How a writer waits in the queue. */
export interface QueueLockOptions {
  /**
   * How long a waiter of a watched queue sleeps between two looks unless the folder changes (default WATCHED_LOOK_MS):
   * what finds a holder killed on this host. A holder that leaves wakes its successor through the watch whatever this is.
   */
  lookMs?: number;
  /** How long to wait for the lock before the refusal (default `queueWaitMs()`). */
  waitMs?: number;
}

/**
 * The waiters of each queue in this process, and the one watch of its folder they share: each is woken at once when
 * an entry it waits for is removed (by any process on this host) or a holder of this process leaves.
 */
const doorbells = new Map<string, Doorbell>();

interface Doorbell {
  /**
   * The waiters asleep now, each woken by calling it, with the entries whose leaving it waits for: only the nearest
   * writer ahead of it in the queue (its predecessor) and the writers that were taking a ticket as it took its own. The
   * holder's leaving so wakes its successor alone, not every waiter of every process on this host.
   */
  waiters: Map<() => void, ReadonlySet<string>>;
  /** The writers of this process waiting in the queue (asleep or looking): the watch ends with the last. */
  members: number;
  /** Undefined when the folder could not be watched: the waiters look every UNWATCHED_LOOK_MS. */
  watcher: FSWatcher | undefined;
}

function ringAll(bell: Doorbell | undefined): void {
  for (const wake of [...(bell?.waiters.keys() ?? [])]) wake();
}

/** An entry of the folder made or removed (`name`; undefined when the watch does not say which): wake who waits for it. */
function ring(bell: Doorbell, name: string | null | undefined): void {
  for (const [wake, awaited] of [...bell.waiters]) if (!name || awaited.has(name)) wake();
}

/** Join the waiters of `dir`'s queue (the first of them watches its folder); returns the doorbell and how to leave. */
function joinDoorbell(dir: string): { bell: Doorbell; leave: () => void } {
  let bell = doorbells.get(dir);
  if (!bell) {
    const made: Doorbell = { waiters: new Map(), members: 0, watcher: undefined };
    try {
      // "rename": an entry made or removed; "change" (a ticket's refresh) wakes nobody.
      made.watcher = watch(dir, { persistent: false }, (event, name) => {
        if (event === "rename") ring(made, typeof name === "string" ? name : undefined);
      });
      // A watch that fails later (the folder removed, the watch revoked): back to looking often.
      made.watcher.on("error", () => {
        made.watcher?.close();
        made.watcher = undefined;
        ringAll(made);
      });
    } catch {
      // No watch here (ENOSPC: the host's inotify watches are used up; a file system without them): looking it is.
    }
    doorbells.set(dir, made);
    bell = made;
  }
  const joined = bell;
  joined.members++;
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    if (--joined.members > 0) return;
    joined.watcher?.close();
    if (doorbells.get(dir) === joined) doorbells.delete(dir);
  };
  return { bell: joined, leave };
}

/**
 * Run `fn` holding the exclusive lock kept in the folder `dir`, which must be
 * the gate home's (nobody but the gate can write it). Writers are served in
 * the order they asked, across processes and within one: asking is one
 * exclusive create of a ticket named by the monotonic clock read just
 * before, and a writer enters when its ticket is the oldest live one and no
 * other writer holds the lock. Entering is marked (an `h-` entry beside the
 * ticket) and then checked again: a writer whose older ticket appeared
 * between its look and its mark (read the clock, then made the ticket late)
 * is let in first, and waits for nobody but a holder that marked before it
 * looked, so two writers never hold the lock at once. A waiter watches the queue folder
 * for its predecessor's ticket, so the holder's leaving (its ticket removed)
 * wakes the next alone and at once, in any process of this host, instead of
 * every waiter or the next at its next look; the holder also removes the
 * tickets of successors killed while they waited. A ticket or a half-taken one of a
 * process that no longer exists on this host (a writer killed while waiting
 * or while holding) is removed by the next writer that finds it (a waiter
 * looks at least every 100 ms, see QueueLockOptions), at once; an
 * entry of another host counts as dead when it has not been refreshed for
 * 10 s. Nothing here is fsynced: a lock does not outlive its processes.
 */
export async function withQueueLock<T>(dir: string, fn: () => T | Promise<T>, label = dir, options: QueueLockOptions = {}): Promise<T> {
  try {
    // Looked at first: a mkdir of a folder that exists still takes its parent's lock, which a rename there may hold.
    // Never `mkdir -p`: the folder the lock goes in is the caller's to make, and one removed (a gate home deleted
    // under a writer still finishing) is refused here, not rebuilt to hold a lock nobody will remove.
    if (!isFolder(dir)) mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EEXIST" || !isFolder(dir))
      throw new UsageError(
        code === "ENOENT"
          ? `cannot lock ${label}: the folder ${path.dirname(dir)} is gone (removed while twinlock was using it); restore the gate home or open another`
          : `cannot make the lock folder ${dir} (${code}); fix the gate home's permissions`,
        { cause: error, code: "HOME_UNREADABLE" },
      );
  }
  const token = randomBytes(8).toString("hex");
  const mine = takeTicket(dir, token);
  const mark = path.join(dir, `h-${mine.key}`);
  const refresh = setInterval(() => {
    touch(path.join(dir, mine.name));
    if (exists(mark)) touch(mark);
  }, REFRESH_MS);
  refresh.unref();
  try {
    await waitForTurn(dir, mine, label, options.lookMs ?? WATCHED_LOOK_MS, options.waitMs ?? queueWaitMs());
    const result = await fn();
    if (!exists(path.join(dir, mine.name)) || !exists(mark))
      throw new ConflictError(`lost the lock on ${label} while writing (its ticket was removed); run the command again`);
    return result;
  } finally {
    clearInterval(refresh);
    remove(mark);
    remove(path.join(dir, mine.name));
    handOver(dir, mine);
    // The folder's watch wakes the waiters too, but a tick later; this process's own are woken now.
    ringAll(doorbells.get(dir));
  }
}

/** Ask for the lock: one exclusive create of a ticket stamped with the monotonic clock read just before. */
function takeTicket(dir: string, token: string): Entry {
  const tag = identityTagOf();
  const name = `t-${monotonicStamp()}-${HOST}-${process.pid}-${token}${tag === undefined ? "" : `-${tag}`}`;
  create(path.join(dir, name));
  return parseEntry(name) as Entry;
}

/**
 * Wait until no live ticket is ahead of `mine` and no other writer holds the
 * lock, then mark it held and look once more: an older ticket made since
 * (its writer read the clock before this one and made its ticket after this
 * one looked) goes first, so the mark is taken back and the wait goes on.
 * A younger writer's mark seen then is of one that will give way in turn
 * (it marked after this ticket was there, so its own second look finds it).
 * Between looks it sleeps until the folder changes (the folder is watched, so
 * a holder leaving wakes its successor at once, in any process of this
 * host) or a short while has passed (see WATCHED_LOOK_MS).
 */
async function waitForTurn(dir: string, mine: Entry, label: string, watchedLookMs: number, waitMs: number): Promise<void> {
  const started = Date.now();
  const mark = path.join(dir, `h-${mine.key}`);
  // Watch before the first look, so a change between a look and the sleep after it still wakes the sleep.
  const { bell, leave } = joinDoorbell(dir);
  try {
    let delay = 1;
    for (;;) {
      let look = lookAhead(dir, mine, true);
      if (!look.ahead) {
        create(mark);
        look = lookAhead(dir, mine, false);
        if (!look.ahead) return;
        remove(mark);
      }
      const { ahead, awaited } = look;
      if (Date.now() - started > waitMs) throw lockedRefusal(label, ahead, waitMs);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          bell.waiters.delete(wake);
          resolve();
        };
        // Watched, its predecessor's leaving wakes it: the look is for what makes no such change (a writer ahead killed,
        // whose entry stays). Unwatched, looks come soon, then every 8 ms.
        const timer = setTimeout(wake, bell.watcher ? watchedLookMs : delay);
        bell.waiters.set(wake, awaited);
      });
      delay = Math.min(delay * 2, UNWATCHED_LOOK_MS);
    }
  } finally {
    leave();
  }
}

/**
 * Who stands before `mine` now: the live tickets older than it, and (with `marks`) every other writer's mark of
 * holding the lock. Entries of writers that are gone are removed on the way. `awaited` is what this waiter is woken
 * by: the nearest older ticket (its predecessor: each writer further ahead leaves before it can) and the marks seen.
 */
function lookAhead(dir: string, mine: Entry, marks: boolean): { ahead: Entry | undefined; awaited: Set<string> } {
  let ahead: Entry | undefined;
  let predecessor: Entry | undefined;
  const awaited = new Set<string>();
  for (const name of list(dir)) {
    const e = parseEntry(name);
    if (!e || e.key === mine.key) continue;
    if (e.kind === "t" ? !before(e, mine) : !marks) continue;
    if (!isAlive(dir, e)) {
      remove(path.join(dir, e.name));
      continue;
    }
    // A holder is named first in a refusal: it is who the queue waits for.
    if (e.kind === "h") {
      ahead = e;
      awaited.add(e.name);
    } else {
      if (!ahead || (ahead.kind === "t" && before(e, ahead))) ahead = e;
      if (!predecessor || before(predecessor, e)) predecessor = e;
    }
  }
  if (predecessor) awaited.add(predecessor.name);
  return { ahead, awaited };
}

/**
 * The refusal of a writer that waited `waitMs` behind `ahead`. A process of this host that is stopped (SIGSTOP, a
 * debugger: state T or t) is named as such, with what frees the lock: it is never passed, since a stopped holder that
 * resumes would write over whoever took its place.
 */
function lockedRefusal(label: string, ahead: Entry, waitMs: number): ConflictError {
  const waited = waitMs >= 1000 ? `${Math.round(waitMs / 1000)}s` : `${waitMs}ms`;
  const stopped = ahead.host === HOST && isProcessStopped(ahead.pid);
  const error = new ConflictError(
    stopped
      ? `${label} is held by stopped process ${ahead.pid} (for over ${waited}); resume it (kill -CONT ${ahead.pid}) or kill it, then run the command again`
      : `${label} is locked by another twinlock process (pid ${ahead.pid}${ahead.host === HOST ? "" : " on another host"}) for over ${waited}; wait for it to finish, then run the command again`,
    { retryable: true, code: "LOCKED" },
  );
  Object.assign(error.details, { lock_wait: true, pid: ahead.pid, stopped });
  return error;
}

/** Whether `error` is a writer's refusal after waiting for a queue lock (see `withQueueLock`). */
export function isLockWaitRefusal(error: unknown): error is ConflictError {
  return error instanceof ConflictError && error.details.lock_wait === true;
}

/** Whether a process of this host is stopped (state T or t in /proc/PID/stat); false where /proc cannot tell. */
export function isProcessStopped(pid: number): boolean {
  // statFields starts at field 3, the state.
  const state = statFields(pid)?.[0];
  return state === "T" || state === "t";
}

/**
 * After the holder `mine` left: remove the tickets of its successors that were killed while they waited (in queue
 * order, up to the first one alive), so the first live waiter is woken by the removal of its predecessor's ticket now,
 * not at its next look. Only this host's tickets: another host's dead entry is known by its age alone.
 */
function handOver(dir: string, mine: Entry): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const after = names
    .map(parseEntry)
    .filter((e): e is Entry => e?.kind === "t" && before(mine, e))
    .sort((a, b) => (before(a, b) ? -1 : 1));
  for (const e of after) {
    if (e.host !== HOST || isWriterAlive(e.pid, e.tag)) return;
    remove(path.join(dir, e.name));
  }
}

/**
 * A holder or waiter still there: the very process of this host that made it (its PID alive with the start time the
 * entry records: not another process the PID was given to since), or an entry of another host refreshed lately.
 */
function isAlive(dir: string, e: Entry): boolean {
  if (e.host === HOST) return isWriterAlive(e.pid, e.tag);
  try {
    return lstatSync(path.join(dir, e.name)).mtimeMs > Date.now() - STALE_MS;
  } catch {
    return false;
  }
}

function create(file: string): void {
  try {
    closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOSPC" || code === "EDQUOT")
      throw new RefusalError(
        `cannot lock ${path.dirname(file)}: the disk is full (${code}); free space on the gate home's disk and run the command again`,
        { code: "DISK_FULL", disk_full: code },
        { cause: error },
      );
    throw new UsageError(`cannot lock ${path.dirname(file)} (${code}); fix the gate home's permissions`, {
      cause: error,
      code: "HOME_UNREADABLE",
    });
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (error) {
    throw new UsageError(`cannot read the lock folder ${dir} (${(error as NodeJS.ErrnoException).code}); fix the gate home's permissions`, {
      cause: error,
    });
  }
}

function remove(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone: another writer removed it as dead, or it was never made.
  }
}

function isFolder(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // Removed: the holder finds out when it leaves (see withQueueLock).
  }
}
