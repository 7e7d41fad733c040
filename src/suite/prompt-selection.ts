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
}

/** The selection a suite config describes. */
export function promptSelection(config: Pick<SuiteConfig, "prompts" | "exclude">): PromptSelection {
  const include = (config.prompts ?? []).map(compileGlob);
  const exclude = (config.exclude ?? []).map(compileGlob);
  const prefixes = (config.prompts ?? []).map(literalPrefix);
  return {
    includes: (rel) =>
      (include.length === 0 ? rel.endsWith(".md") : include.some((g) => g.matches(rel))) && !exclude.some((g) => g.matches(rel)),
    mayContain: (relDir) =>
      !exclude.some((g) => g.matches(relDir)) &&
      (prefixes.length === 0 || prefixes.some((p) => p === "" || p.startsWith(`${relDir}/`) || `${relDir}/`.startsWith(p))),
  };
}

/** A compiled glob: `matches(path)` over POSIX relative paths. */
export interface Glob {
  matches(rel: string): boolean;
}

/**
 * Compile a glob. Matching works segment by segment with dynamic programming
 * (and a two-pointer match inside a segment), never with a backtracking
 * regular expression: its cost is at most the product of the glob's and the
 * path's lengths, so a hostile `twinlock.yaml` cannot make a walk crawl.
 */
export function compileGlob(glob: string): Glob {
  const parts = glob
    .split("/")
    .filter((p, i, all) => !(p === "**" && all[i - 1] === "**"))
    .map((p) => (p === "**" ? ANY_FOLDERS : compileName(p)));
  return { matches: (rel) => matchSegments(parts, rel.split("/")) };
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

function matchSegments(glob: ReadonlyArray<NameTest | typeof ANY_FOLDERS>, path: readonly string[]): boolean {
  // ok[i][j]: glob[i..] matches path[j..]; filled from the end.
  const rows = glob.length + 1;
  const cols = path.length + 1;
  const ok = new Uint8Array(rows * cols);
  ok[glob.length * cols + path.length] = 1;
  for (let i = glob.length - 1; i >= 0; i--) {
    const g = glob[i] as NameTest | typeof ANY_FOLDERS;
    for (let j = path.length; j >= 0; j--) {
      let v = 0;
      if (g === ANY_FOLDERS) v = ok[(i + 1) * cols + j] || (j < path.length ? ok[i * cols + j + 1] : 0) ? 1 : 0;
      else if (j < path.length && ok[(i + 1) * cols + j + 1] && g(path[j] as string)) v = 1;
      ok[i * cols + j] = v;
    }
  }
  return ok[0] === 1;
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
