import { randomBytes } from "node:crypto";
import fs, {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import lockfile from "proper-lockfile";
import { ConflictError, UsageError } from "../errors/errors.js";
import { openedPath } from "../input/open-beneath.js";
import { readRegularFile } from "../input/read-regular-file.js";
import { isWriterAlive, removeLeftoversOfDeadWriters, removeWriterLeftover } from "./is-process-alive.js";
import { IDENTITY_TAG, identityTagOf } from "./process-start.js";

/** How long a writer waits for another writer before giving up. */
export const LOCK_WAIT_MS = 60_000;

/** A lock whose holder has not refreshed it for this long is dead (proper-lockfile refreshes every 2 s). */
const STALE_MS = 10_000;

interface Owner {
  pid: number;
  host: string;
  token: string;
  /** The holder's identity tag (see IDENTITY_TAG), absent where there is no /proc and in locks of older versions. */
  tag?: string;
}

/** A tag as an owner file may carry it: anything else is read as no tag (judged by the PID alone). */
const TAG = new RegExp(`^${IDENTITY_TAG}$`);

/** Largest owner file read: `{pid, host, token}` is under 400 bytes even with a 255-byte host name. */
const MAX_OWNER_BYTES = 4096;

/**
 * Run `fn` while holding the exclusive lock of `file` (a `FILE.lock` folder,
 * made by proper-lockfile with an `onCompromised` handler that aborts the
 * write). The lock folder comes into existence already holding its owner's
 * pid, so a lock left by a writer that was killed, and a lock folder with no
 * valid owner file (which twinlock never leaves), are taken over at once
 * instead of after the stale timeout; a live holder is always waited for.
 */
export async function withFileLock<T>(file: string, fn: () => T | Promise<T>): Promise<T> {
  const lockDir = `${file}.lock`;
  let compromised: Error | undefined;
  const started = Date.now();
  let delay = 5;
  let release: (() => Promise<void>) | undefined;
  const tag = identityTagOf();
  const owner: Owner = {
    pid: process.pid,
    host: os.hostname(),
    token: randomBytes(8).toString("hex"),
    ...(tag === undefined ? {} : { tag }),
  };
  while (!release) {
    try {
      release = await lockfile.lock(file, {
        realpath: false,
        lockfilePath: lockDir,
        stale: STALE_MS,
        update: 2_000,
        retries: 0,
        fs: lockFs(lockDir, owner),
        onCompromised: (error) => {
          compromised = error;
        },
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ENOTEMPTY: proper-lockfile found the lock stale but cannot rmdir it, because it holds an owner file.
      if (code !== "ELOCKED" && code !== "ENOTEMPTY") {
        throw new UsageError(
          `cannot lock ${file} (${code ?? (error as Error).message}); check that its folder exists, is writable and the name is not too long`,
          { cause: error },
        );
      }
      if (takeOverAbandonedLock(lockDir)) continue;
      if (Date.now() - started > LOCK_WAIT_MS) {
        const holder = ownerOf(lockDir);
        throw new ConflictError(
          `${file} is locked by another twinlock process${holder ? ` (pid ${holder.pid} on ${holder.host})` : ""} for over ${LOCK_WAIT_MS / 1000}s; wait for it, or remove ${lockDir} if no twinlock process is running`,
          { cause: error, retryable: true, code: "LOCKED" },
        );
      }
      await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
      delay = Math.min(delay * 2, 100);
    }
  }
  try {
    removeDeadLeftovers(lockDir);
    const result = await fn();
    if (compromised)
      throw new ConflictError(`lost the lock on ${file} while writing (${compromised.message}); run the command again`, {
        cause: compromised,
      });
    return result;
  } finally {
    removeOwnLock(lockDir, owner);
    await release().catch(() => {});
  }
}

/**
 * Release by moving the lock folder aside whole, then deleting it, so the
 * lock never exists without its owner file (a writer killed in between
 * leaves only a `.dead-PID-…` folder, which the next holder removes).
 */
function removeOwnLock(lockDir: string, owner: Owner): void {
  if (ownerOf(lockDir)?.token !== owner.token) return;
  const aside = `${lockDir}.dead-${process.pid}-${randomBytes(4).toString("hex")}${tagSuffix()}`;
  try {
    renameSync(lockDir, aside);
  } catch {
    return;
  }
  removeWriterLeftover(aside);
}

/**
 * proper-lockfile's file system, except that making the lock folder makes it
 * complete with its owner file: the folder is built under a private name and
 * renamed into place. A plain mkdir followed by writing the owner leaves, when
 * the writer is killed in between, a lock nobody can tell is dead until the
 * stale timeout. The rename fails when a lock (which always holds an owner
 * file) is in place; it would replace only an empty folder, which no
 * twinlock writer leaves (see `removeOwnLock`).
 */
function lockFs(lockDir: string, owner: Owner): typeof fs {
  const mkdir = (dir: string, callback: (error: NodeJS.ErrnoException | null) => void) => {
    if (dir !== lockDir) return fs.mkdir(dir, callback);
    const staging = `${lockDir}.new-${owner.pid}-${owner.token}${tagSuffix()}`;
    try {
      mkdirSync(staging);
      try {
        writeOwnerFile(staging, owner);
        renameSync(staging, lockDir);
      } catch (error) {
        removeWriterLeftover(staging);
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOTEMPTY" || code === "EEXIST") throw Object.assign(new Error(`${lockDir} is held`), { code: "EEXIST" });
        throw error;
      }
    } catch (error) {
      return callback(error as NodeJS.ErrnoException);
    }
    callback(null);
  };
  // The lock's other calls (the stat after taking it, the refresh every 2 s, the release) run on this thread, their
  // callbacks a tick later: proper-lockfile's async calls would start libuv's thread pool, a few milliseconds of every
  // write, for calls that take microseconds. Only the calls proper-lockfile makes are given: a copy of all of node:fs
  // would run its lazy getters, which load the stream modules (about 1.5 ms of every write).
  return {
    mkdir,
    stat: onThisThread(fs.statSync),
    utimes: onThisThread(fs.utimesSync),
    rmdir: onThisThread(fs.rmdirSync),
    rmdirSync: fs.rmdirSync,
    realpath: fs.realpath,
  } as unknown as typeof fs;
}

/** A callback-style version of the synchronous `call`, which answers on the next tick (as the thread pool's would, never at once). */
function onThisThread<A extends unknown[], R>(call: (...args: A) => R) {
  return (...args: [...A, (error: NodeJS.ErrnoException | null, result?: R) => void]) => {
    const callback = args.pop() as (error: NodeJS.ErrnoException | null, result?: R) => void;
    let result: R;
    try {
      result = call(...(args as unknown as A));
    } catch (error) {
      process.nextTick(callback, error as NodeJS.ErrnoException);
      return;
    }
    process.nextTick(callback, null, result);
  };
}

/**
 * What a lock folder holds, judged without waiting on anything in it: a valid
 * owner; `ownerless` (no owner file, or one that is not a regular file or
 * not a twinlock owner: junk, since twinlock renames a lock folder into place
 * complete with its owner); nothing there; or `unknown` when it cannot be
 * looked at (e.g. EACCES), which is never taken over.
 */
type LockState = { kind: "owned"; owner: Owner } | { kind: "ownerless" } | { kind: "absent" } | { kind: "unknown" };

function inspectLock(lockDir: string): LockState {
  const ownerFile = path.join(lockDir, "owner");
  let ownerStat: Stats | undefined;
  try {
    const dirStat = lstatSync(lockDir, { throwIfNoEntry: false });
    if (!dirStat) return { kind: "absent" };
    if (!dirStat.isDirectory()) return { kind: "unknown" };
    ownerStat = lstatSync(ownerFile, { throwIfNoEntry: false });
  } catch {
    return { kind: "unknown" };
  }
  // Judged by lstat first, so a FIFO planted as the owner file is never opened.
  if (!ownerStat?.isFile() || ownerStat.size > MAX_OWNER_BYTES) return { kind: "ownerless" };
  let text: string;
  try {
    text = readRegularFile(ownerFile, "lock owner file", { noFollow: true, maxBytes: MAX_OWNER_BYTES }).toString("utf8");
  } catch {
    // Unreadable (EMFILE, EACCES), or swapped since the lstat: judge it on the next look rather than guess.
    return { kind: "unknown" };
  }
  try {
    const o = JSON.parse(text);
    if (typeof o?.pid === "number" && typeof o.host === "string" && typeof o.token === "string") {
      const tag = typeof o.tag === "string" && o.tag.length <= 40 && TAG.test(o.tag) ? o.tag : undefined;
      return { kind: "owned", owner: { pid: o.pid, host: o.host, token: o.token, ...(tag === undefined ? {} : { tag }) } };
    }
  } catch {
    // Not JSON: a torn or foreign file, which no live twinlock holder has.
  }
  return { kind: "ownerless" };
}

/** The lock's owner, when it has a valid one. */
function ownerOf(lockDir: string): Owner | undefined {
  const state = inspectLock(lockDir);
  return state.kind === "owned" ? state.owner : undefined;
}

function isStale(lockDir: string): boolean {
  try {
    return statSync(lockDir).mtimeMs < Date.now() - STALE_MS;
  } catch {
    return false;
  }
}

/**
 * Take over a lock nobody holds: one whose owner is a process on this host
 * that no longer exists, one not refreshed within the stale timeout (an
 * owner on another host that died), or an ownerless folder (junk: see
 * `inspectLock`). The folder is moved aside under a private name and judged
 * again there, so only what was judged abandoned is deleted: if a live lock
 * was taken in between and moved instead, it is put back.
 */
function takeOverAbandonedLock(lockDir: string): boolean {
  const seen = inspectLock(lockDir);
  const abandoned =
    seen.kind === "ownerless" ||
    (seen.kind === "owned" && ((seen.owner.host === os.hostname() && !isWriterAlive(seen.owner.pid, seen.owner.tag)) || isStale(lockDir)));
  if (!abandoned) return false;
  const aside = `${lockDir}.dead-${process.pid}-${randomBytes(4).toString("hex")}${tagSuffix()}`;
  try {
    renameSync(lockDir, aside);
  } catch {
    return false;
  }
  const moved = inspectLock(aside);
  const same = seen.kind === "owned" ? moved.kind === "owned" && moved.owner.token === seen.owner.token : moved.kind === "ownerless";
  if (same) {
    // A junk folder with more than an owner file stays aside (renamed out of the way, never deleted as a tree).
    removeWriterLeftover(aside);
    return true;
  }
  // We moved a live lock taken in between: put it back. Should yet another lock have been taken meanwhile, the
  // moved one has lost its place either way (its holder's refresh reports the lock compromised), so it is removed.
  try {
    renameSync(aside, lockDir);
  } catch {
    removeWriterLeftover(aside);
  }
  return false;
}

/**
 * Write the owner file into a lock folder being built. The folder sits where
 * other users may write, so it could be swapped for a link between mkdir and
 * this open: the file is created exclusively, without following a link, and
 * the path the kernel created it at is checked; a file that landed elsewhere
 * is removed and the attempt fails.
 */
function writeOwnerFile(staging: string, owner: Owner): void {
  const expected = path.join(realpathSync(path.dirname(staging)), path.basename(staging), "owner");
  const fd = openSync(expected, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    const actual = openedPath(fd);
    if (actual !== undefined && actual !== expected) {
      unlinkSync(actual);
      throw new ConflictError(`the lock folder ${staging} was swapped for a link while it was made; lock refused`);
    }
    writeSync(fd, JSON.stringify(owner));
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove what writers killed on this host left beside the lock: a lock
 * folder they were building (`.new-PID-…`) or one they had moved aside to
 * delete (`.dead-PID-…`). Only entries of processes that no longer exist.
 */
function removeDeadLeftovers(lockDir: string): void {
  removeLeftoversOfDeadWriters(path.dirname(lockDir), `${path.basename(lockDir)}.`, LEFTOVER);
}

/** `new-PID-HEX-TAG` or `dead-PID-HEX-TAG` (TAG absent where there is no /proc, and in leftovers of older versions). */
const LEFTOVER = new RegExp(`^(?:new|dead)-(\\d{1,10})-[0-9a-f]{1,16}(?:-(?<tag>${IDENTITY_TAG}))?$`);

/** `-TAG` of this process for a leftover's name (see IDENTITY_TAG), or "" where there is no /proc. */
function tagSuffix(): string {
  const tag = identityTagOf();
  return tag === undefined ? "" : `-${tag}`;
}
