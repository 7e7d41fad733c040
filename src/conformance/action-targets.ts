import { dropLineRange } from "../handoff/action-target-path.js";
import { compileGlob, type Glob } from "../suite/prompt-selection.js";

/**
 * The path globs an action's free-text `target` names: its comma-, space-
 * or semicolon-separated words that look like paths (a `/`, a `.` or a
 * glob character), each without a trailing `:line` or `:from-to` range
 * (`cart/cache.go:80-95` → `cart/cache.go`), without a leading `./`; a word
 * ending in `/` names everything below it.
 */
export function actionTargetGlobs(target: string | null): string[] {
  if (target === null) return [];
  return target
    .split(/[\s,;]+/)
    .map((w) => dropLineRange(w.replace(/^[`'"(]+|[`'")]+$/g, "")).replace(/^\.\//, ""))
    .filter((w) => w !== "" && !w.startsWith("/") && !w.split("/").includes("..") && /[/.*?]/.test(w))
    .map((w) => (w.endsWith("/") ? `${w}**` : w));
}

/** A compiled set of globs: whether a POSIX relative path is inside any of them. */
export interface PathScope {
  includes(rel: string): boolean;
}

/**
 * Paths matched as written, never as globs: a file by equality, a folder
 * (ending in `/`) by prefix. For the run's own records, whose names the
 * agent chose (a handoff folder called `**` must not cover everything).
 */
export function literalPathScope(paths: readonly string[]): PathScope {
  return { includes: (rel) => paths.some((p) => (p.endsWith("/") ? rel.startsWith(p) : rel === p)) };
}

/** The scope of several globs (a glob naming a folder also covers everything below it). */
export function pathScope(globs: readonly string[]): PathScope {
  const compiled: Glob[] = globs.flatMap((g) => [compileGlob(g), compileGlob(`${g.replace(/\/$/, "")}/**`)]);
  return { includes: (rel) => compiled.some((g) => g.matches(rel)) };
}
