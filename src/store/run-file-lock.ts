import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import lockfile from "proper-lockfile";
import { ConflictError } from "../errors/errors.js";

/** How long a writer waits for another writer before giving up. */
export const LOCK_WAIT_MS = 60_000;

interface Owner {
  pid: number;
  host: string;
  token: string;
}

/**
 * Run `fn` while holding the exclusive lock of `file` (a `FILE.lock` folder,
 * made by proper-lockfile with an `onCompromised` handler that aborts the
 * write). The holder's pid is written inside the lock, so a lock left by a
 * writer that was killed is taken over at once instead of after the stale
 * timeout; a live holder is always waited for.
 */
export async function withFileLock<T>(file: string, fn: () => T | Promise<T>): Promise<T> {
  const lockDir = `${file}.lock`;
  let compromised: Error | undefined;
  const started = Date.now();
  let delay = 5;
  let release: (() => Promise<void>) | undefined;
  while (!release) {
    try {
      release = await lockfile.lock(file, {
        realpath: false,
        lockfilePath: lockDir,
        stale: 10_000,
        update: 2_000,
        retries: 0,
        onCompromised: (error) => {
          compromised = error;
        },
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ELOCKED") throw error;
      if (takeOverDeadLock(lockDir)) continue;
      if (Date.now() - started > LOCK_WAIT_MS) {
        const owner = readOwner(lockDir);
        throw new ConflictError(
          `${file} is locked by another twinlock process${owner ? ` (pid ${owner.pid} on ${owner.host})` : ""} for over ${LOCK_WAIT_MS / 1000}s; wait for it, or remove ${lockDir} if no twinlock process is running`,
          { cause: error },
        );
      }
      await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
      delay = Math.min(delay * 2, 100);
    }
  }
  const owner: Owner = { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString("hex") };
  writeFileSync(`${lockDir}/owner`, JSON.stringify(owner));
  try {
    const result = await fn();
    if (compromised) throw new ConflictError(`lost the lock on ${file} while writing (${compromised.message}); run the command again`, { cause: compromised });
    return result;
  } finally {
    rmSync(`${lockDir}/owner`, { force: true });
    await release().catch(() => {});
  }
}

function readOwner(lockDir: string): Owner | undefined {
  try {
    const o = JSON.parse(readFileSync(`${lockDir}/owner`, "utf8"));
    if (typeof o.pid === "number" && typeof o.host === "string" && typeof o.token === "string") return o;
  } catch {
    // No owner file yet (the holder is between mkdir and writing it) or unreadable: treat as alive.
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * If the lock's owner is a process on this host that no longer exists, move
 * the lock aside and delete it. Moving first, then checking the token inside
 * the moved folder, makes sure we only ever delete the dead owner's lock and
 * never one a live process took a moment ago.
 */
function takeOverDeadLock(lockDir: string): boolean {
  const owner = readOwner(lockDir);
  if (!owner || owner.host !== os.hostname() || isAlive(owner.pid)) return false;
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
