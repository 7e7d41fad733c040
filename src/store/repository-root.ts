import { existsSync, realpathSync } from "node:fs";
import path from "node:path";

/**
 * The top folder of the git checkout holding `dir` (the nearest folder at or
 * above it with a `.git` entry: a folder, or a worktree's file), as a real
 * path; undefined outside any checkout. Read from the disc only, so a server
 * without git finds it too.
 */
export function repositoryRootOf(dir: string): string | undefined {
  let at: string;
  try {
    at = realpathSync(dir);
  } catch {
    return undefined;
  }
  for (;;) {
    if (existsSync(path.join(at, ".git"))) return at;
    const up = path.dirname(at);
    if (up === at) return undefined;
    at = up;
  }
}
