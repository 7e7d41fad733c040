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
  const visit = (value: unknown, path: string, topKey: string, parentSuspect: boolean) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return;
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const keyPath = path === "" ? key : `${path}.${key}`;
      const top = topKey === "" ? key : topKey;
      const name = key.toLowerCase();
      if (path === "" && SANCTIONED_TWIN_KEYS.has(key)) continue;
      const carried = findPromptId(child);
      const suspect = SUSPECT_WORDS.test(name);
      if (ALWAYS_FORBIDDEN.test(name) || ((suspect || parentSuspect) && carried !== undefined)) {
        found.push({ path: keyPath, topKey: top, carriedId: carried });
        continue;
      }
      visit(child, keyPath, top, suspect || parentSuspect);
    }
  };
  visit(frontmatter, "", "", false);
  return found;
}

function findPromptId(value: unknown): string | undefined {
  if (typeof value === "string") {
    const m = ID_ANYWHERE.exec(value);
    return m ? m[0] : undefined;
  }
  if (Array.isArray(value)) {
    for (const v of value) {
      const id = findPromptId(v);
      if (id) return id;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) {
      const id = findPromptId(v);
      if (id) return id;
    }
  }
  return undefined;
}
