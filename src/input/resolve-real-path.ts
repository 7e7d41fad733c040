import { lstatSync, readlinkSync } from "node:fs";
import path from "node:path";
import { BUDGETS } from "./budgets.js";

/** The kernel's limit on symbolic links followed in one path (Linux MAXSYMLINKS). */
const MAX_LINKS = 40;

/**
 * Why the path `p` names is over the path budget (BUDGETS.path: PATH_MAX
 * bytes, a bounded number of parts), or undefined when it is within it.
 * Checked by its text alone, before a file is looked at: no file system
 * takes a longer path, and the walk costs a system call per existing part.
 */
export function pathOverBudget(p: string): string | undefined {
  const b = BUDGETS.path;
  // The UTF-8 length is at least the string's length: a long string is refused without counting.
  const bytes = p.length > b.bytes ? p.length : Buffer.byteLength(p);
  if (bytes > b.bytes)
    return `the path ${shownPath(p)} is ${bytes.toLocaleString("en-US")} bytes or more, longer than the ${b.bytes.toLocaleString("en-US")}-byte limit for a ${b.what} (PATH_MAX)`;
  let parts = 1;
  for (let i = p.indexOf("/"); i !== -1; i = p.indexOf("/", i + 1)) parts++;
  if (parts > b.parts)
    return `the path ${shownPath(p)} has ${parts.toLocaleString("en-US")} parts, more than the ${b.parts.toLocaleString("en-US")}-part limit for a ${b.what}`;
  return undefined;
}

/** A path as a message quotes it: as it is, or past 200 characters cut to them with its length said. */
export function shownPath(p: string): string {
  return p.length <= 200 ? p : `${p.slice(0, 200)}… (${p.length.toLocaleString("en-US")} characters)`;
}

/**
 * The real path `p` names (absolute, or relative to `base`), resolved part by
 * part as the kernel walks it: a symbolic link (dangling or not: writing
 * through it creates its target there) is followed where it stands, so a
 * `..` after it goes up from where the link points, not textually. Parts
 * past the last existing folder are appended as written (a link that is not
 * there yet cannot redirect a write), a `..` among them taking one back.
 * Throws over the path budget (`pathOverBudget`), before a file is looked
 * at, and past 40 links (ELOOP). One lstat per existing part and one
 * readlink per link: linear in the path.
 */
export function resolveRealPath(p: string, base: string): string {
  const whole = path.isAbsolute(p) ? p : `${base}/${p}`;
  const over = pathOverBudget(whole);
  if (over !== undefined) throw Object.assign(new Error(over), { code: "ENAMETOOLONG" });
  // The parts still to walk, the next one last (a link's target is pushed in its place).
  const pending = whole.split("/").reverse();
  if (!path.isAbsolute(whole)) pending.push(...path.resolve().split("/").reverse());
  let real = ""; // The real path walked so far ("" is the root), every part of it existing.
  let missing: string[] = []; // The parts after `real` that do not exist (yet).
  let links = 0;
  for (let part = pending.pop(); part !== undefined; part = pending.pop()) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (missing.length > 0) missing.pop();
      else real = real.slice(0, real.lastIndexOf("/"));
      continue;
    }
    if (missing.length > 0) {
      missing.push(part);
      continue;
    }
    const next = `${real}/${part}`;
    const target = linkTarget(next);
    if (target === null) missing = [part];
    else if (target === undefined) real = next;
    else {
      if (++links > MAX_LINKS) throw Object.assign(new Error(`too many symbolic links at ${shownPath(next)}`), { code: "ELOOP" });
      if (Buffer.byteLength(target) > BUDGETS.path.bytes)
        throw Object.assign(new Error(`the symbolic link ${shownPath(next)} points to a path over PATH_MAX`), { code: "ENAMETOOLONG" });
      if (target.startsWith("/")) real = "";
      for (const t of target.split("/").reverse()) pending.push(t);
    }
  }
  return missing.length > 0 ? `${real}/${missing.join("/")}` : real || "/";
}

/** A link's target; undefined when `p` exists and is no link; null when it does not exist (or its parent is no folder). */
function linkTarget(p: string): string | null | undefined {
  let isLink: boolean;
  try {
    isLink = lstatSync(p).isSymbolicLink();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
  return isLink ? readlinkSync(p) : undefined;
}

/** True when `p` is `root` or inside it (both real, absolute paths). */
export function isWithin(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (!rel.startsWith(`..${path.sep}`) && rel !== ".." && !path.isAbsolute(rel));
}
