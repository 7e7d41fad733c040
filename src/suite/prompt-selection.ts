import { UsageError } from "../errors/errors.js";
import type { SuiteConfig } from "./suite-config.js";

/**
 * Which files under the suite root are prompts (SPEC §8 `prompts`/`exclude`):
 * every `*.md` by default, else those matching a `prompts` glob; never one
 * matching an `exclude` glob. Globs are relative to the config file and use
 * `**` (any folders), `*` (any name part) and `?` (one character). Judged on
 * the path alone, so a file outside the selection is never opened.
 */
export interface PromptSelection {
  /** Whether the POSIX relative path names a prompt file. */
  includes(rel: string): boolean;
  /** Whether the walk should go into this folder at all (a glob could still match below it). */
  mayContain(relDir: string): boolean;
}

/** The selection a suite config describes. */
export function promptSelection(config: Pick<SuiteConfig, "prompts" | "exclude">): PromptSelection {
  const include = (config.prompts ?? []).map(globToRegExp);
  const exclude = (config.exclude ?? []).map(globToRegExp);
  const prefixes = (config.prompts ?? []).map(literalPrefix);
  return {
    includes: (rel) => (include.length === 0 ? rel.endsWith(".md") : include.some((r) => r.test(rel))) && !exclude.some((r) => r.test(rel)),
    mayContain: (relDir) =>
      !exclude.some((r) => r.test(relDir) || r.test(`${relDir}/`)) &&
      (prefixes.length === 0 || prefixes.some((p) => p.startsWith(`${relDir}/`) || `${relDir}/`.startsWith(p) || p === "")),
  };
}

/** Most wildcards one glob may hold: more could make matching a long path slow (nested repetition). */
const MAX_WILDCARDS = 8;

/** A glob as an anchored regular expression over POSIX relative paths; a glob with too many wildcards is refused. */
export function globToRegExp(given: string): RegExp {
  // Repeated `**/` means the same as one; collapsing it keeps matching linear in practice.
  const glob = given.replace(/(?:\*\*\/){2,}/g, "**/");
  const wildcards = (glob.match(/\*\*|\*|\?/g) ?? []).length;
  if (wildcards > MAX_WILDCARDS)
    throw new UsageError(
      `twinlock.yaml glob ${JSON.stringify(given)} has ${wildcards} wildcards, over the ${MAX_WILDCARDS} allowed; simplify it`,
    );
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*" && glob[i + 1] === "*") {
      // `**/` matches zero or more folders; a trailing `**` matches everything below.
      if (glob[i + 2] === "/") {
        out += "(?:[^/]+/)*";
        i += 2;
      } else {
        out += ".*";
        i += 1;
      }
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/** The folders a glob is certainly under (`prompts/` for `prompts/**` + `/*.md`), "" when it may match anywhere. */
function literalPrefix(glob: string): string {
  const wild = glob.search(/[*?]/);
  const head = wild === -1 ? glob : glob.slice(0, wild);
  const slash = head.lastIndexOf("/");
  return slash === -1 ? "" : head.slice(0, slash + 1);
}
