import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Suite } from "../suite/load-suite.js";
import { checkPairMember } from "../twin/check-pair-member.js";
import { type ExactTwin, resolveExactTwin } from "../twin/resolve-exact-twin.js";

/** Pair problems of every prompt, plus the genuine pairs: those the runtime itself resolves. */
export function checkPairs(suite: Suite): { diagnostics: Diagnostic[]; pairs: ExactTwin[] } {
  const diagnostics: Diagnostic[] = [];
  for (const prompt of suite.prompts) diagnostics.push(...checkPairMember(suite, prompt));
  const pairs: ExactTwin[] = [];
  for (const prompt of suite.byId.values()) {
    if (prompt.role !== "investigative" || prompt.pairedPromptId === null) continue;
    const resolved = resolveExactTwin(suite, prompt.id);
    if (resolved.ok) pairs.push(resolved.twin);
  }
  pairs.sort((a, b) => (a.planner.id < b.planner.id ? -1 : a.planner.id > b.planner.id ? 1 : 0));
  return { diagnostics, pairs };
}
