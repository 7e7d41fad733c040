import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Suite } from "../suite/load-suite.js";
import { type ExactTwin, judgeRequestedExecutor } from "../twin/resolve-exact-twin.js";

/**
 * For every pair, ask the runtime's own executor judgement about every
 * executive prompt of the suite: it must accept the twin and refuse every
 * other (SPEC §3 "refusal"). Returns the number of judgements made.
 */
export function checkTwinRefusal(suite: Suite, pairs: readonly ExactTwin[]): { diagnostics: Diagnostic[]; judged: number } {
  const executives = suite.prompts.filter((p) => p.role === "executive").map((p) => p.id);
  const out: Diagnostic[] = [];
  let judged = 0;
  for (const twin of pairs) {
    for (const id of executives) {
      judged++;
      const verdict = judgeRequestedExecutor(twin, id);
      const shouldAccept = id === twin.executor.id;
      if (verdict.ok !== shouldAccept) {
        out.push({
          code: "TWIN_REFUSAL",
          severity: "error",
          file: twin.planner.file,
          line: 1,
          col: 1,
          promptId: twin.planner.id,
          message: `the runtime ${verdict.ok ? "accepts" : "refuses"} ${id} as executor for ${twin.planner.id}; only ${twin.executor.id} may be accepted`,
        });
      }
    }
  }
  return { diagnostics: out, judged };
}
