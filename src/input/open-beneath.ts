import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync } from "node:fs";
import path from "node:path";
import { RefusalError } from "../errors/errors.js";

/**
 * Open `rel` under `realRoot` — a real path resolved once, before the folder
 * was listed — and prove that what was opened really is `realRoot/rel`: no
 * symbolic link at the last step (O_NOFOLLOW), and none swapped in for the
 * root, an ancestor or any folder on the way (checked on the open
 * descriptor through /proc/self/fd, else by comparing the inode with a fresh
 * lstat of every step). Node has no openat(2), so a folder replaced by a link
 * between listing and opening would otherwise lead the open elsewhere: that
 * is refused, and the descriptor closed.
 */
export function openBeneath(realRoot: string, rel: string, what: string): number {
  const fd = openSync(path.join(realRoot, ...rel.split("/")), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    requireOpenedBeneath(fd, realRoot, rel, what);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Throw unless the open descriptor `fd` is the file `realRoot/rel` (see
 * `openBeneath`). The refusal names neither the file nor where it led: the
 * names came from a folder that was swapped, so they may be another folder's,
 * one the agent must not learn about.
 */
export function requireOpenedBeneath(fd: number, realRoot: string, rel: string, what: string): void {
  const expected = path.join(realRoot, ...rel.split("/"));
  const actual = openedPath(fd);
  const inside = actual !== undefined ? actual === expected : sameFileAlongPath(fd, realRoot, rel);
  if (!inside)
    throw new RefusalError(
      `a folder of the ${what} folder ${realRoot} was replaced by a link while it was read, so what was read is not the handoff; nothing from it is used — read it again once it is left alone`,
      { attack: "path-swap" },
    );
}

/** The path the kernel opened for `fd`, where /proc tells it (undefined elsewhere). */
export function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** Without /proc: no step from `root` to `rel` is a link now, and the last is the very inode opened. */
function sameFileAlongPath(fd: number, root: string, rel: string): boolean {
  let current = root;
  let last: ReturnType<typeof lstatSync> | undefined;
  for (const part of rel.split("/")) {
    current = path.join(current, part);
    last = lstatSync(current);
    if (last.isSymbolicLink()) return false;
  }
  const opened = fstatSync(fd);
  return last !== undefined && last.ino === opened.ino && last.dev === opened.dev;
}
