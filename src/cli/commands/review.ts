import { type ReviewDecision, reviewPairPlan } from "../../gate/review-pair-plan.js";
import { parseHashOption, parseName, parsePromptId, parseText } from "../../input/parse-input.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/** `twinlock review-pair-plan RUN ID --decision …`: a review receipt bound to the frozen hash. */
export async function runReview(
  runFile: string,
  id: string,
  o: CommonOptions & { decision: string; feedback?: string; handoffHash?: string; reviewer?: string; key?: string },
): Promise<CommandResult> {
  const r = await reviewPairPlan({
    run: runFile,
    store: storeOption(o),
    planner: parsePromptId(id, "planner"),
    decision: o.decision as ReviewDecision,
    feedback: o.feedback === undefined ? undefined : parseText(o.feedback, "--feedback"),
    handoffHash: o.handoffHash === undefined ? undefined : parseHashOption(o.handoffHash),
    reviewer: o.reviewer === undefined ? undefined : parseName(o.reviewer, "--reviewer"),
    key: keyOption(o.key),
  });
  const w = r.workflow;
  const next = {
    plan_review_pending: `more approvals are required; another reviewer runs: twinlock review-pair-plan ${runFile} ${w.planner} --decision approved --handoff-hash ${r.receipt.handoff_hash} --key FILE`,
    plan_revision_pending: `revise the handoff, then: twinlock freeze-pair-handoff ${runFile} ${w.planner}`,
    execution_consent_pending: `twinlock pair-status ${runFile} ${w.planner}  (asks the consent question)`,
    closed: "the workflow is closed without execution",
  }[w.state as "plan_revision_pending"];
  const text = [
    `recorded review of ${w.planner} revision ${r.receipt.revision}: ${r.receipt.decision} by ${r.receipt.reviewer}${r.receipt.signature ? " (signed)" : ""}`,
    ...(r.receipt.feedback ? [`  feedback: ${r.receipt.feedback}`] : []),
    `state: ${w.state}`,
    ...(next ? [`next: ${next}`] : []),
  ].join("\n");
  return { exitCode: 0, text, json: { ok: true, state: w.state, receipt: r.receipt } };
}
