import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { resolveRealPath } from "../input/resolve-real-path.js";

/** The targets made ready to be mounted, and how to take back what was made for them. */
export interface PreparedTargets {
  /** Every target: an existing file or folder, or a new file whose folder now exists. */
  paths: string[];
  /** Notes for the person: the placeholders and folders made. */
  notes: string[];
  /** Remove each placeholder the command left empty, and each folder made for a new target that is empty again. */
  undo(): void;
}

/**
 * Make every target ready to be mounted. With `placeholders` (a file target
 * mounted alone: a mount needs something to mount on, and mounting the
 * folder would let the command make any other new file there), a target
 * that does not exist yet gets an empty placeholder file and the folders it
 * needs; the command writes the placeholder in place. Without (a file
 * target written through its folder, its other entries read-only again:
 * `targetMounts`), a new target gets only the folders it goes into, and no
 * placeholder (Claude Code's Write refuses a file it has not Read). Each is
 * made only if nothing is there (never through a link: the path is resolved
 * again after each step and must not move). After the command, an empty
 * placeholder and the folders made that are empty again are removed.
 */
export function prepareTargets(targets: readonly string[], options: { placeholders: boolean } = { placeholders: true }): PreparedTargets {
  const files: { path: string; dev: number; ino: number }[] = [];
  const dirs: string[] = [];
  const notes: string[] = [];
  const undo = () => {
    for (const f of [...files].reverse()) {
      try {
        const st = lstatSync(f.path);
        if (st.isFile() && st.size === 0 && st.dev === f.dev && st.ino === f.ino) unlinkSync(f.path);
      } catch {
        // gone already
      }
    }
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
      if (options.placeholders) {
        const fd = openSync(target, "wx", 0o644);
        try {
          const st = fstatSync(fd);
          files.push({ path: target, dev: st.dev, ino: st.ino });
        } finally {
          closeSync(fd);
        }
        if (resolveRealPath(target, "/") !== target) throw new Error(`${target} moved while it was made`);
        notes.push(
          `twinlock: ${target} does not exist yet: an empty placeholder is there for the sandbox to mount writable (removed after, if left empty)`,
        );
      } else if (missing.length)
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
