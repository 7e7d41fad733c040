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

/** What a key's name says, remembered per name: a suite repeats the same key names in every prompt. */
const KEY_CLASSES = new Map<string, { suspect: boolean; forbidden: boolean }>();
function classifyKey(key: string): { suspect: boolean; forbidden: boolean } {
  let known = KEY_CLASSES.get(key);
  if (!known) {
    const name = key.toLowerCase();
    known = { suspect: SUSPECT_WORDS.test(name), forbidden: ALWAYS_FORBIDDEN.test(name) };
    if (KEY_CLASSES.size >= 10_000) KEY_CLASSES.clear();
    KEY_CLASSES.set(key, known);
  }
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
    if (Array.isArray(value)) for (const v of value) note(findPromptId(v));
    else
      for (const key of Object.keys(value)) {
        // A mapping's keys carry IDs as much as its values (`executor_routes: {MD-26: preferred}`).
        note(idIn(key));
        note(findPromptId((value as Record<string, unknown>)[key]));
      }
    carriedOf.set(value, id);
    return id;
  };
  const visit = (value: unknown, path: string, topKey: string, parentSuspect: boolean) => {
    if (value === null || typeof value !== "object") return;
    // Mappings inside lists are searched too (`notes: [{fallback_executor: MD-26}]`).
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        visit(item, `${path}[${i}]`, topKey, parentSuspect);
      });
      return;
    }
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      const keyPath = path === "" ? key : `${path}.${key}`;
      const top = topKey === "" ? key : topKey;
      if (path === "" && SANCTIONED_TWIN_KEYS.has(key)) continue;
      const { suspect, forbidden } = classifyKey(key);
      const carried = findPromptId(child);
      if (forbidden || ((suspect || parentSuspect) && carried !== undefined)) {
        found.push({ path: keyPath, topKey: top, carriedId: carried });
        continue;
      }
      visit(child, keyPath, top, suspect || parentSuspect);
    }
  };
  visit(frontmatter, "", "", false);
  return found;
}
