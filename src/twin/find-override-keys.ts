import { PROMPT_ID_PATTERN } from "../suite/prompt.js";
import { SANCTIONED_TWIN_KEYS } from "./canonical-metadata.js";

/** Key names that always smell of a second source of truth for the twin, whatever they hold. */
const ALWAYS_FORBIDDEN =
  /(^|_)(execution_twin|twin_prompt_id|twin_id|executor_prompt_ids?|alternate_executors?|fallback_executors?|executor_override|routing_override|preferred_executors?|backup_executors?|secondary_executors?)$/;

/** Name words that make a key suspect when its value carries a prompt ID. */
const SUSPECT_WORDS =
  /(twin|execut(e|ed|es|ing|ion|or)|pair(ed)?|counterpart|partner|route|routing|override|fallback|alternate|alternative|delegate|dispatch|handoff_to|successor|next_prompt|invoke|runner)/;

/** A prompt ID standing anywhere in a string, as a whole word. */
const ID_ANYWHERE = new RegExp(`(?<![A-Za-z0-9_-])${PROMPT_ID_PATTERN.source.slice(1, -1)}(?![A-Za-z0-9_-])`);

/** Bits of what a key's name says: about the twin, executors, routing or overrides; a known override name. */
const SUSPECT = 1;
const FORBIDDEN = 2;

/**
 * What a key's name says (SUSPECT and FORBIDDEN bits), remembered per name: a
 * suite repeats the same key names in every prompt. Looked up inline, as a
 * number, in the walk below, which asks for every key of every prompt.
 */
const KEY_CLASSES = new Map<string, number>();
function classifyKey(key: string): number {
  const name = key.toLowerCase();
  const known = (SUSPECT_WORDS.test(name) ? SUSPECT : 0) | (ALWAYS_FORBIDDEN.test(name) ? FORBIDDEN : 0);
  if (KEY_CLASSES.size >= 10_000) KEY_CLASSES.clear();
  KEY_CLASSES.set(key, known);
  return known;
}

/** A cheap first look: no string without a capital, a dash and a digit in that order can hold a prompt ID. */
const MAY_HOLD_ID = /[A-Z][A-Z0-9]*-[0-9]/;

export interface OverrideKey {
  /** Dotted path of the key inside the frontmatter, e.g. `routing.executor`. */
  path: string;
  /** The top-level key it sits under (for positions). */
  topKey: string;
  /** A prompt ID found in its value, if any. */
  carriedId: string | undefined;
}

/**
 * Find keys that could name or re-route the twin outside `paired_prompt_id`
 * and `accepted_planning_prompt_id` (SPEC §2, "no second source of truth"):
 * any key named like a known override, and any key whose name is about twins,
 * executors, routing or overrides and whose value carries a prompt ID.
 * Nested mappings are searched too.
 */
export function findOverrideKeys(frontmatter: Record<string, unknown>): OverrideKey[] {
  const found: OverrideKey[] = [];
  // Each value's first prompt ID is worked out once (aliases share objects), so the walk stays linear in the frontmatter.
  const carriedOf = new Map<object, string | undefined>();
  const idIn = (text: string) => (MAY_HOLD_ID.test(text) ? ID_ANYWHERE.exec(text)?.[0] : undefined);
  const findPromptId = (value: unknown): string | undefined => {
    if (typeof value === "string") return idIn(value);
    if (value === null || typeof value !== "object") return undefined;
    if (carriedOf.has(value)) return carriedOf.get(value);
    let id: string | undefined;
    // Every part is visited even after an ID is found, so each nested object's own answer is worked out (and kept) once.
    const note = (inner: string | undefined) => {
      if (inner !== undefined && id === undefined) id = inner;
    };
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) note(findPromptId(value[i]));
    else {
      const keys = Object.keys(value);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        // A mapping's keys carry IDs as much as its values (`executor_routes: {MD-26: preferred}`).
        note(idIn(key));
        note(findPromptId((value as Record<string, unknown>)[key]));
      }
    }
    carriedOf.set(value, id);
    return id;
  };
  // The path to the value being visited (its first `depth` entries): keys, and item indexes as numbers. Spelled out
  // only for a key that is found.
  // (Loops count by index, and keys are walked with for…in: the walk runs once per prompt on every value, mostly before
  // the JIT has compiled it, where a for-of allocates a result object per step and Object.keys an array per mapping.
  // A parsed mapping is a plain object, whose for…in yields exactly Object.keys, in the same order.)
  const parts: Array<string | number> = [];
  const visit = (value: object, depth: number, topKey: string, parentSuspect: boolean) => {
    // Mappings inside lists are searched too (`notes: [{fallback_executor: MD-26}]`).
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (item === null || typeof item !== "object") continue;
        parts[depth] = i;
        visit(item, depth + 1, topKey, parentSuspect);
      }
      return;
    }
    const topLevel = depth === 0;
    for (const key in value) {
      if (topLevel && SANCTIONED_TWIN_KEYS.has(key)) continue;
      const child = (value as Record<string, unknown>)[key];
      const top = topLevel ? key : topKey;
      const known = KEY_CLASSES.get(key) ?? classifyKey(key);
      // Only a key whose name (or whose parent's name) is suspect is asked what prompt ID its value carries.
      if (known !== 0 || parentSuspect) {
        const carried = findPromptId(child);
        if ((known & FORBIDDEN) !== 0 || carried !== undefined) {
          found.push({ path: spellPath(parts.slice(0, depth), key), topKey: top, carriedId: carried });
          continue;
        }
      }
      if (child === null || typeof child !== "object") continue;
      parts[depth] = key;
      visit(child, depth + 1, top, parentSuspect || (known & SUSPECT) !== 0);
    }
  };
  visit(frontmatter, 0, "", false);
  return found;
}

/** The dotted path of `key` under `parts` (`runtime.hints[0].fallback_executor`), as the frontmatter nests it. */
function spellPath(parts: ReadonlyArray<string | number>, key: string): string {
  if (parts.length === 0) return key;
  let out = "";
  for (const [n, part] of parts.entries()) out += typeof part === "number" ? `[${part}]` : n === 0 ? part : `.${part}`;
  return `${out}.${key}`;
}
