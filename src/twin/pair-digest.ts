import { hashCanonical } from "../crypto/canonical-hash.js";
import type { Prompt } from "../suite/prompt.js";
import { EXECUTOR_CANONICAL, PLANNER_CANONICAL } from "./canonical-metadata.js";

/**
 * A digest of everything that makes a pair what it is: both IDs and titles,
 * every canonical metadata key, and `requires`. A run records it at creation;
 * admission refuses when the suite's pairing changed since (a new run is needed).
 */
export function pairDigest(planner: Prompt, executor: Prompt): string {
  const pick = (p: Prompt, keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, p.frontmatter[k] ?? null]));
  return hashCanonical({
    planner: { id: planner.id, title: planner.title ?? null, ...pick(planner, Object.keys(PLANNER_CANONICAL)) },
    executor: {
      id: executor.id,
      title: executor.title ?? null,
      requires: executor.requires,
      ...pick(executor, Object.keys(EXECUTOR_CANONICAL)),
    },
  });
}
