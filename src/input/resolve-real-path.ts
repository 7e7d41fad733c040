import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";

/**
 * The real path `p` names (absolute, or relative to `base`), with every
 * symbolic link and `..` resolved, even when the last parts do not exist yet:
 * the longest existing ancestor is resolved and the rest appended. A link
 * that is not there yet cannot redirect a write, and one that is, is followed.
 */
export function resolveRealPath(p: string, base: string, depth = 0): string {
  let rest: string[] = [];
  let current = path.resolve(base, p);
  for (;;) {
    // A link (dangling or not) is followed to where it points: writing through it creates its target there.
    const link = linkTarget(current);
    if (link !== undefined) {
      if (depth >= 40) throw Object.assign(new Error(`too many symbolic links at ${current}`), { code: "ELOOP" });
      return path.join(resolveRealPath(link, path.dirname(current), depth + 1), ...rest);
    }
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

function linkTarget(p: string): string | undefined {
  try {
    return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : undefined;
  } catch {
    return undefined;
  }
}

/** True when `p` is `root` or inside it (both real, absolute paths). */
export function isWithin(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (!rel.startsWith(`..${path.sep}`) && rel !== ".." && !path.isAbsolute(rel));
}
