import { lstatSync, mkdirSync, rmdirSync, statSync } from "node:fs";
import path from "node:path";
import { resolveRealPath } from "../input/resolve-real-path.js";

/** The targets made ready to be mounted, and how to take back what was made for them. */
export interface PreparedTargets {
  /** Every target: an existing file or folder, or a new file whose folder now exists. */
  paths: string[];
  /** Notes for the person: the folders made. */
  notes: string[];
  /** Remove each folder made for a new target that is empty again. */
  undo(): void;
}

/**
 * Make every target's folder exist, so that the sandbox can mount it: a
 * file target is written through its folder, mounted writable with every
 * other entry of it read-only again (`targetParents`), so a new target
 * needs no placeholder, only the folders it goes into. Each folder is made
 * only if nothing is there (never through a link: the path is resolved
 * again after each step and must not move). After the command, the folders
 * made that are empty again are removed.
 */
export function prepareTargets(targets: readonly string[]): PreparedTargets {
  const dirs: string[] = [];
  const notes: string[] = [];
  const undo = () => {
    for (const d of [...dirs].reverse()) {
      try {
        rmdirSync(d);
      } catch {
        // not empty, or gone: kept
      }
    }
  };
  try {
    for (const target of targets) {
      // The binding holds real paths: one that became a link since would mount what it points to writable.
      if (resolveRealPath(target, "/") !== target) throw new Error(`${target} goes through a symbolic link now`);
      if (linkExists(target)) continue;
      const missing: string[] = [];
      for (let p = path.dirname(target); !exists(p); p = path.dirname(p)) missing.unshift(p);
      for (const d of missing) {
        mkdirSync(d);
        dirs.push(d);
        if (resolveRealPath(d, "/") !== d) throw new Error(`${d} moved while it was made`);
      }
      if (missing.length)
        notes.push(
          `twinlock: ${target} does not exist yet: its folder ${missing.join(", ")} is made for it (removed after, if left empty)`,
        );
    }
  } catch (error) {
    undo();
    throw error;
  }
  return { paths: [...targets], notes, undo };
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

function linkExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
