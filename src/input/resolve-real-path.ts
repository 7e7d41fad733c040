import { realpathSync } from "node:fs";
import path from "node:path";

/**
 * The real path `p` names (absolute, or relative to `base`), with every
 * symbolic link and `..` resolved, even when the last parts do not exist yet:
 * the longest existing ancestor is resolved and the rest appended. A link
 * that is not there yet cannot redirect a write, and one that is, is followed.
 */
export function resolveRealPath(p: string, base: string): string {
  let rest: string[] = [];
  let current = path.resolve(base, p);
  for (;;) {
    try {
      return path.join(realpathSync(current), ...rest);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      const parent = path.dirname(current);
      if (parent === current) return path.join(current, ...rest);
      rest = [path.basename(current), ...rest];
      current = parent;
    }
  }
}

/** True when `p` is `root` or inside it (both real, absolute paths). */
export function isWithin(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (!rel.startsWith(`..${path.sep}`) && rel !== ".." && !path.isAbsolute(rel));
}
