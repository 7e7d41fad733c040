import { readdirSync, rmSync } from "node:fs";
import path from "node:path";

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
 * Delete the entries of `dir` named `prefix` + a tail that `tail` matches
 * with the writer's pid as its first group, when that writer is dead: the
 * leftovers (temporary files, half-made or moved-aside lock folders) of a
 * writer killed mid-write. A live writer's entries are never touched.
 */
export function removeLeftoversOfDeadWriters(dir: string, prefix: string, tail: RegExp): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = name.startsWith(prefix) ? tail.exec(name.slice(prefix.length)) : null;
    if (m && !isProcessAlive(Number(m[1]))) rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}
