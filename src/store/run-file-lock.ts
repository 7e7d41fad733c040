import { randomBytes } from "node:crypto";
import fs, { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import lockfile from "proper-lockfile";
import { ConflictError, UsageError } from "../errors/errors.js";
import { isProcessAlive, removeLeftoversOfDeadWriters } from "./is-process-alive.js";

/** How long a writer waits for another writer before giving up. */
export const LOCK_WAIT_MS = 60_000;

/** A lock whose holder has not refreshed it for this long is dead (proper-lockfile refreshes every 2 s). */
const STALE_MS = 10_000;

interface Owner {
  pid: number;
  host: string;
  token: string;
}

/**
 * Run `fn` while holding the exclusive lock of `file` (a `FILE.lock` folder,
 * made by proper-lockfile with an `onCompromised` handler that aborts the
 * write). The lock folder comes into existence already holding its owner's
 * pid, so a lock left by a writer that was killed is taken over at once
 * instead of after the stale timeout; a live holder is always waited for.
 */
export async function withFileLock<T>(file: string, fn: () => T | Promise<T>): Promise<T> {
  const lockDir = `${file}.lock`;
  let compromised: Error | undefined;
  const started = Date.now();
  let delay = 5;
  let release: (() => Promise<void>) | undefined;
  const owner: Owner = { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString("hex") };
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
      if (takeOverDeadLock(lockDir)) continue;
      if (Date.now() - started > LOCK_WAIT_MS) {
        const holder = readOwner(lockDir);
        throw new ConflictError(
          `${file} is locked by another twinlock process${holder ? ` (pid ${holder.pid} on ${holder.host})` : ""} for over ${LOCK_WAIT_MS / 1000}s; wait for it, or remove ${lockDir} if no twinlock process is running`,
          { cause: error },
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
  if (readOwner(lockDir)?.token !== owner.token) return;
  const aside = `${lockDir}.dead-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(lockDir, aside);
  } catch {
    return;
  }
  rmSync(aside, { recursive: true, force: true });
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
    const staging = `${lockDir}.new-${owner.pid}-${owner.token}`;
    try {
      mkdirSync(staging);
      try {
        writeFileSync(path.join(staging, "owner"), JSON.stringify(owner));
        renameSync(staging, lockDir);
      } catch (error) {
        rmSync(staging, { recursive: true, force: true });
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOTEMPTY" || code === "EEXIST") throw Object.assign(new Error(`${lockDir} is held`), { code: "EEXIST" });
        throw error;
      }
    } catch (error) {
      return callback(error as NodeJS.ErrnoException);
    }
    callback(null);
  };
  return { ...fs, mkdir } as unknown as typeof fs;
}

function readOwner(lockDir: string): Owner | undefined {
  try {
    const o = JSON.parse(readFileSync(`${lockDir}/owner`, "utf8"));
    if (typeof o.pid === "number" && typeof o.host === "string" && typeof o.token === "string") return o;
  } catch {
    // No owner file (not made by this twinlock) or unreadable: treat as alive; the stale timeout frees it.
  }
  return undefined;
}

function isStale(lockDir: string): boolean {
  try {
    return statSync(lockDir).mtimeMs < Date.now() - STALE_MS;
  } catch {
    return false;
  }
}

/**
 * If the lock's owner is a process on this host that no longer exists, or
 * the lock has not been refreshed within the stale timeout (an owner on
 * another host that died), move the lock aside and delete it. Moving first,
 * then checking the token inside the moved folder, makes sure we only ever
 * delete the dead owner's lock and never one a live process took a moment ago.
 */
function takeOverDeadLock(lockDir: string): boolean {
  const owner = readOwner(lockDir);
  if (!owner) return false;
  const dead = (owner.host === os.hostname() && !isProcessAlive(owner.pid)) || isStale(lockDir);
  if (!dead) return false;
  const aside = `${lockDir}.dead-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(lockDir, aside);
  } catch {
    return false;
  }
  const moved = readOwner(aside);
  if (moved?.token === owner.token) {
    rmSync(aside, { recursive: true, force: true });
    return true;
  }
  // We moved a live lock taken in between: put it back.
  try {
    renameSync(aside, lockDir);
  } catch {
    rmSync(aside, { recursive: true, force: true });
  }
  return false;
}

/**
 * Remove what writers killed on this host left beside the lock: a lock
 * folder they were building (`.new-PID-…`) or one they had moved aside to
 * delete (`.dead-PID-…`). Only entries of processes that no longer exist.
 */
function removeDeadLeftovers(lockDir: string): void {
  removeLeftoversOfDeadWriters(path.dirname(lockDir), `${path.basename(lockDir)}.`, /^(?:new|dead)-(\d+)-[0-9a-f]+$/);
}
