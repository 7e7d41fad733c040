import { lstatSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import path from "node:path";
import { hasProcFs, identityTagOf } from "./process-start.js";

/** Whether a process with this pid exists on this host (EPERM: it exists, owned by another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the writer an entry names is still alive: the process `pid` exists and, when the entry records its identity
 * tag and this system has /proc, has that very start time in this boot (a PID reused by another process is dead). An
 * entry without a tag (written before tags, or where there is no /proc) is judged by its PID alone, as it always was.
 */
export function isWriterAlive(pid: number, tag: string | undefined): boolean {
  if (tag === undefined || !hasProcFs()) return isProcessAlive(pid);
  return identityTagOf(pid) === tag;
}

/**
 * Delete the entries of `dir` named `prefix` + a tail that `tail` matches
 * with the writer's pid as its first group (and its identity tag, see
 * IDENTITY_TAG of process-start.ts, as the group named `tag` when the name
 * records one), when that writer is dead: the
 * leftovers (temporary files, half-made or moved-aside lock folders) of a
 * writer killed mid-write. A live writer's entries are never touched, and
 * by default nothing is deleted recursively (see `removeWriterLeftover`):
 * `dir` may be a folder another user writes, where a planted folder could be
 * swapped for a link mid-delete. Pass `remove` only for the gate home's own folders.
 */
export function removeLeftoversOfDeadWriters(
  dir: string,
  prefix: string,
  tail: RegExp,
  remove: (entry: string) => void = removeWriterLeftover,
): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = name.startsWith(prefix) ? tail.exec(name.slice(prefix.length)) : null;
    if (m && !isWriterAlive(Number(m[1]), m.groups?.tag)) remove(path.join(dir, name));
  }
}

/**
 * Remove one thing a twinlock writer leaves: a file or link (unlinked, never
 * followed), or a lock folder holding nothing but its `owner` file. A folder
 * holding anything else is not twinlock's: it is left where it is, since
 * deleting a tree by path in a folder another user writes can be led out of
 * it by a folder swapped for a link mid-way. Returns whether it is gone.
 */
export function removeWriterLeftover(entry: string): boolean {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(entry);
  } catch {
    return true;
  }
  try {
    if (!stat.isDirectory()) {
      unlinkSync(entry);
      return true;
    }
    const names = readdirSync(entry);
    if (names.some((n) => n !== "owner")) return false;
    if (names.length === 1 && !unlinkOwnerIn(entry, stat)) return false;
    rmdirSync(entry);
    return true;
  } catch {
    return false;
  }
}

/**
 * Unlink `owner` inside the very folder lstat saw: from within it (chdir,
 * then its inode checked), so a folder swapped for a link in between cannot
 * lead the unlink to another folder's `owner` (a live lock's, say).
 */
function unlinkOwnerIn(dir: string, seen: { dev: number; ino: number }): boolean {
  const back = process.cwd();
  try {
    process.chdir(dir);
  } catch {
    return false;
  }
  try {
    const here = lstatSync(".");
    if (here.dev !== seen.dev || here.ino !== seen.ino) return false;
    const owner = lstatSync("owner");
    if (owner.isDirectory()) return false;
    unlinkSync("owner");
    return true;
  } catch {
    return false;
  } finally {
    process.chdir(back);
  }
}
