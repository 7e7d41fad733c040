import { type ReviewDecision, reviewPairPlan } from "../../gate/review-pair-plan.js";
import { resolveActor } from "../../gate/resolve-actor.js";
import { parseHashOption, parsePromptId, parseText } from "../../input/parse-input.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

/** `twinlock review-pair-plan RUN ID --decision …`: a review receipt bound to the frozen hash. */
export async function runReview(
  runFile: string,
  id: string,
  o: CommonOptions & { decision: string; feedback?: string; handoffHash?: string; reviewer?: string },
): Promise<CommandResult> {
  const r = await reviewPairPlan({
    runFile,
    planner: parsePromptId(id, "planner"),
    decision: o.decision as ReviewDecision,
    feedback: o.feedback === undefined ? undefined : parseText(o.feedback, "--feedback"),
    handoffHash: o.handoffHash === undefined ? undefined : parseHashOption(o.handoffHash),
    reviewer: resolveActor(o.reviewer),
  });
  const w = r.workflow;
  const next = {
    plan_revision_pending: `revise the handoff, then: twinlock freeze-pair-handoff ${runFile} ${w.planner}`,
    execution_consent_pending: `twinlock pair-status ${runFile} ${w.planner}  (asks the consent question)`,
    closed: "the workflow is closed without execution",
  }[w.state as "plan_revision_pending"];
  const text = [
    `recorded review of ${w.planner} revision ${r.receipt.revision}: ${r.receipt.decision} by ${r.receipt.reviewer}`,
    ...(r.receipt.feedback ? [`  feedback: ${r.receipt.feedback}`] : []),
    `state: ${w.state}`,
    ...(next ? [`next: ${next}`] : []),
  ].join("\n");
  return { exitCode: 0, text, json: { ok: true, state: w.state, receipt: r.receipt } };
}
