import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import { isWithin } from "../input/resolve-real-path.js";

/** How many entries a file target's folder may hold: each other one is a read-only mount of its own. */
export const SIBLING_BUDGET = 1000;

/** A file target's folder, mounted writable, with every other entry of it mounted read-only again. */
export interface ParentMount {
  dir: string;
  /** The entries there that are no target (real paths), mounted read-only after the folder. */
  readOnly: string[];
  /** The targets in it (names). */
  targets: string[];
}

/** How the targets are mounted: folder targets alone, file targets through their folders. */
export interface TargetMounts {
  /** Folder targets, each mounted writable with everything in it (and, without `throughFolders`, file targets mounted alone). */
  folders: string[];
  /** The folders of the file targets that no folder target holds, ancestors first. */
  parents: ParentMount[];
}

/**
 * How the sandbox mounts `targets` (existing real paths, or new files whose
 * folder exists). A folder target is mounted writable as it is. A file
 * target is not mounted alone (a tool that writes a temporary file beside
 * it and renames it over it, as Claude Code's Write and Edit do, fails
 * then): its folder is mounted writable and every other entry there
 * read-only again, so none of them can be written, removed or renamed (a
 * mount point is busy). What that adds is new names in the folder, which
 * exec lists after the command (`newEntries`). A folder already inside a
 * folder target needs nothing more. Without `throughFolders` every target
 * is mounted alone (a file target then cannot be replaced by a rename, and
 * no new name can be made beside it). Refused, in one line, when a folder
 * holds more than `budget` entries, or a symbolic link (a mount on a link
 * protects what it points to, not the link).
 */
export function targetMounts(targets: readonly string[], throughFolders = true, budget = SIBLING_BUDGET): TargetMounts {
  if (!throughFolders) return { folders: [...targets], parents: [] };
  const folders = targets.filter((t) => isFolder(t));
  const files = targets.filter((t) => !folders.includes(t));
  const dirs = [...new Set(files.map((f) => path.dirname(f)))].filter((d) => !folders.some((f) => isWithin(d, f))).sort();
  const parents = dirs.map((dir) => {
    const names = readdirSync(dir);
    const inIt = files.filter((f) => path.dirname(f) === dir);
    const todo = `admit the folder ${dir} as a target instead, or pass --hook-only to rely on the hook alone`;
    if (names.length > budget)
      throw new UsageError(
        `the folder ${dir} of the file target ${inIt[0]} holds ${names.length} entries, more than the ${budget} the sandbox keeps read-only one by one beside a file target: ${todo}`,
      );
    const readOnly = names.map((n) => path.join(dir, n)).filter((p) => !inIt.includes(p));
    const link = readOnly.find((p) => lstatSync(p).isSymbolicLink());
    if (link)
      throw new UsageError(
        `${link} is a symbolic link beside the file target ${inIt[0]}, and the sandbox cannot keep a link read-only in the folder it makes writable for the target: ${todo}`,
      );
    return { dir, readOnly, targets: inIt.map((f) => path.basename(f)) };
  });
  return { folders, parents };
}

/**
 * The entries of the file targets' folders that were not there before and
 * are no target: what the command added beside the targets (a target's own
 * temporary file it left behind included), for the person to see.
 */
export function newEntries(parents: readonly ParentMount[]): string[] {
  const found: string[] = [];
  for (const p of parents) {
    const before = new Set([...p.readOnly.map((r) => path.basename(r)), ...p.targets]);
    let names: string[];
    try {
      names = readdirSync(p.dir);
    } catch {
      continue;
    }
    for (const n of names.sort()) if (!before.has(n)) found.push(path.join(p.dir, n));
  }
  return found;
}

function isFolder(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}
