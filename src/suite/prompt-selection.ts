import type { SuiteConfig } from "./suite-config.js";

/**
 * Which files under the suite root are prompts (SPEC §8 `prompts`/`exclude`):
 * every `*.md` by default, else those matching a `prompts` glob; never one
 * matching an `exclude` glob. Globs are relative to the config file and use
 * `**` (any folders), `*` (any part of a name) and `?` (one character).
 * Judged on the path alone, so a file outside the selection is never opened.
 */
export interface PromptSelection {
  /** Whether the POSIX relative path names a prompt file. */
  includes(rel: string): boolean;
  /** Whether the walk should go into this folder at all (a glob could still match below it). */
  mayContain(relDir: string): boolean;
  /**
   * `includes` for the entries of one folder (`""` for the root), asked by
   * name: the folder's part of the path is matched once, not again for
   * every entry.
   */
  within(relDir: string): (name: string) => boolean;
}

/** The selection a suite config describes. */
export function promptSelection(config: Pick<SuiteConfig, "prompts" | "exclude">): PromptSelection {
  const include = (config.prompts ?? []).map(compileGlob);
  const exclude = (config.exclude ?? []).map(compileGlob);
  const prefixes = (config.prompts ?? []).map(literalPrefix);
  const within = (relDir: string) => {
    const folders = relDir === "" ? [] : relDir.split("/");
    const includeStates = include.map((g) => g.statesAfter(folders));
    const excludeStates = exclude.map((g) => g.statesAfter(folders));
    return (name: string) =>
      (include.length === 0 ? name.endsWith(".md") : include.some((g, k) => g.matchesIn(includeStates[k] as GlobStates, name))) &&
      !exclude.some((g, k) => g.matchesIn(excludeStates[k] as GlobStates, name));
  };
  return {
    includes: (rel) => {
      const slash = rel.lastIndexOf("/");
      return within(slash === -1 ? "" : rel.slice(0, slash))(rel.slice(slash + 1));
    },
    within,
    mayContain: (relDir) =>
      !exclude.some((g) => g.matches(relDir)) &&
      (prefixes.length === 0 || prefixes.some((p) => p === "" || p.startsWith(`${relDir}/`) || `${relDir}/`.startsWith(p))),
  };
}

/** A compiled glob: `matches(path)` over POSIX relative paths. */
export interface Glob {
  matches(rel: string): boolean;
}

/** Which glob segments can come next once some folders are matched: `true` at `i` when the glob's first `i` segments matched them. */
export type GlobStates = readonly boolean[];

/** A glob matched one path segment at a time, so the folders of many paths can be matched once. */
export interface SegmentGlob extends Glob {
  /** The states after matching `folders` from the start of the glob. */
  statesAfter(folders: readonly string[]): GlobStates;
  /** Whether the path of those folders and then `name` matches. */
  matchesIn(states: GlobStates, name: string): boolean;
}

/**
 * Compile a glob. Matching steps through the path one segment at a time,
 * keeping the set of glob segments that can come next (a `**` may stay or
 * be passed), never with a backtracking regular expression: its cost is at
 * most the product of the glob's and the path's lengths (and a two-pointer
 * match inside a segment), so a hostile `twinlock.yaml` cannot make a walk crawl.
 */
export function compileGlob(glob: string): SegmentGlob {
  const parts = glob
    .split("/")
    .filter((p, i, all) => !(p === "**" && all[i - 1] === "**"))
    .map((p) => (p === "**" ? ANY_FOLDERS : compileName(p)));
  // onlyFolders[i]: the segments from i on are all `**`, so they match an empty rest of the path.
  const onlyFolders = new Array<boolean>(parts.length + 1).fill(true);
  for (let i = parts.length - 1; i >= 0; i--) onlyFolders[i] = parts[i] === ANY_FOLDERS && (onlyFolders[i + 1] as boolean);
  const passFolders = (states: boolean[]) => {
    for (let i = 0; i < parts.length; i++) if (states[i] && parts[i] === ANY_FOLDERS) states[i + 1] = true;
    return states;
  };
  const start = passFolders(onlyFolders.map((_, i) => i === 0));
  const step = (states: GlobStates, name: string) => {
    const next = new Array<boolean>(parts.length + 1).fill(false);
    for (let i = 0; i < parts.length; i++) {
      if (!states[i]) continue;
      const part = parts[i] as NameTest | typeof ANY_FOLDERS;
      if (part === ANY_FOLDERS) next[i] = true;
      else if (part(name)) next[i + 1] = true;
    }
    return passFolders(next);
  };
  const statesAfter = (folders: readonly string[]) => folders.reduce(step, start);
  // The last step needs no new states: the path matches when a segment that can come next takes the name and only
  // `**` are left after it (or is a `**` followed by nothing else).
  const matchesIn = (states: GlobStates, name: string) => {
    for (let i = 0; i < parts.length; i++) {
      if (!states[i]) continue;
      const part = parts[i] as NameTest | typeof ANY_FOLDERS;
      if (part === ANY_FOLDERS ? onlyFolders[i] : onlyFolders[i + 1] && part(name)) return true;
    }
    return false;
  };
  return {
    statesAfter,
    matchesIn,
    matches: (rel) => {
      const path = rel.split("/");
      return matchesIn(statesAfter(path.slice(0, -1)), path[path.length - 1] as string);
    },
  };
}

/** `**`, which matches any number of path segments. */
const ANY_FOLDERS = "**";

/** A test of one name (a path segment) against one glob segment. */
type NameTest = (name: string) => boolean;

/**
 * The test for one glob segment, made once per glob: a segment without
 * wildcards is the name itself, and `*` followed by a plain suffix (`*.md`)
 * is that suffix, the same answers `matchName` gives without walking the
 * characters of every path it meets.
 */
function compileName(pattern: string): NameTest {
  if (!/[*?]/.test(pattern)) return (name) => name === pattern;
  const suffix = pattern.slice(1);
  if (pattern[0] === "*" && !/[*?]/.test(suffix)) return (name) => name.endsWith(suffix);
  return (name) => matchName(pattern, name);
}

/** `*` and `?` within one name, by the classic two-pointer match (no backtracking blow-up). */
function matchName(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === "?" || pattern[p] === name[n])) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      mark = n;
    } else if (star !== -1) {
      p = star + 1;
      n = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

/** The folders a glob is certainly under (`prompts/` for `prompts/**` + `/*.md`), "" when it may match anywhere. */
function literalPrefix(glob: string): string {
  const wild = glob.search(/[*?]/);
  const head = wild === -1 ? glob : glob.slice(0, wild);
  const slash = head.lastIndexOf("/");
  return slash === -1 ? "" : head.slice(0, slash + 1);
}
