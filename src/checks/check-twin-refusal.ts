import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Suite } from "../suite/load-suite.js";
import { acceptedExecutorId, type ExactTwin, judgeRequestedExecutor } from "../twin/resolve-exact-twin.js";

/**
 * SPEC §3 "refusal": for every pair, the runtime's executor judgement accepts
 * the twin and refuses every other executive prompt. Proved per pair, not
 * per pair × executive (which grows with the square of the suite): the
 * runtime accepts exactly one string, `acceptedExecutorId(twin)`, so the
 * property holds when that string is the twin's ID (an ID is one prompt:
 * duplicated IDs are reported by their own check) and the judgement agrees —
 * it accepts the twin, and refuses the executives beside it in ID order and
 * near misses of the twin's ID (another case, padding, the planner itself).
 * Returns the number of judgements made.
 */
export function checkTwinRefusal(suite: Suite, pairs: readonly ExactTwin[]): { diagnostics: Diagnostic[]; judged: number } {
  const executives = suite.prompts.filter((p) => p.role === "executive").map((p) => p.id);
  const sorted = [...new Set(executives)].sort();
  const index = new Map(sorted.map((id, i) => [id, i]));
  const out: Diagnostic[] = [];
  let judged = 0;
  const wrong = (twin: ExactTwin, id: string, accepts: boolean) =>
    out.push({
      code: "TWIN_REFUSAL",
      severity: "error",
      file: twin.planner.file,
      line: 1,
      col: 1,
      promptId: twin.planner.id,
      message: `the runtime ${accepts ? "accepts" : "refuses"} ${id} as executor for ${twin.planner.id}; only ${twin.executor.id} may be accepted`,
    });
  for (const twin of pairs) {
    const exact = twin.executor.id;
    const accepted = acceptedExecutorId(twin);
    if (accepted !== exact) wrong(twin, accepted, true);
    judged++;
    if (!judgeRequestedExecutor(twin, exact).ok) wrong(twin, exact, false);
    const at = index.get(exact) ?? -1;
    const probes = new Set([sorted[at - 1], sorted[at + 1], exact.toLowerCase(), ` ${exact}`, `${exact} `, twin.planner.id]);
    probes.delete(exact);
    for (const probe of probes) {
      if (probe === undefined) continue;
      judged++;
      if (judgeRequestedExecutor(twin, probe).ok) wrong(twin, probe, true);
    }
  }
  return { diagnostics: out, judged };
}
