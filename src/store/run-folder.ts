import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import { requirePlainPath } from "../input/parse-input.js";

/**
 * The run file's path with its folder resolved to a real path, once, after
 * checking that nobody but this user (or root) can swap that folder or any
 * folder above it for a link: every folder from the run folder's parent up to
 * `/` is owned by this user or root and not group/world-writable, or is
 * sticky (like `/tmp`) with the run folder itself owned by this user or root.
 * The run folder may be writable by the agent (it writes the run file); its
 * path may not be, or the gate's own writes (temporary file, rename, lock)
 * could be led into the gate home between one step and the next.
 */
export function resolveRunFile(runFile: string): string {
  const given = path.resolve(runFile);
  requirePlainPath(given, "run file");
  let dir: string;
  try {
    dir = realpathSync(path.dirname(given));
  } catch (error) {
    throw new UsageError(
      `the run file's folder ${path.dirname(given)} cannot be used (${(error as NodeJS.ErrnoException).code}); create it first`,
      { cause: error },
    );
  }
  const uid = typeof process.geteuid === "function" ? process.geteuid() : 0;
  const own = (s: { uid: number }) => s.uid === uid || s.uid === 0;
  let child = statSync(dir);
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    const s = statSync(d);
    const closed = own(s) && (s.mode & 0o022) === 0;
    const sticky = (s.mode & 0o1000) !== 0 && own(child);
    if (!closed && !sticky)
      throw new UsageError(
        `the run file's folder ${dir} sits under ${d}, which other users can change (mode ${(s.mode & 0o7777).toString(8)}, owner ${s.uid}): an agent could swap the folder for a link while the gate writes; keep runs in a folder whose parents only you (or root) can write`,
      );
    if (d === path.dirname(d)) break;
    child = s;
  }
  return path.join(dir, path.basename(given));
}
