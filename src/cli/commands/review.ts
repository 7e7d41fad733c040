import { UsageError } from "../../errors/errors.js";
import { pairStatusFromRun } from "../../gate/pair-status.js";
import { MAX_COMMENTS, parseCommentOption } from "../../gate/review-comments.js";
import { type ReviewDecision, reviewPairPlan } from "../../gate/review-pair-plan.js";
import { parseHashOption, parseName, parsePromptId, parseText } from "../../input/parse-input.js";
import { shellQuote } from "../../run/next-step.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";
import { stateInWords } from "../state-in-words.js";

/** `twinlock review-pair-plan RUN ID --decision …`: a review receipt bound to the frozen hash. */
export async function runReview(
  runFile: string,
  id: string,
  o: CommonOptions & { decision: string; feedback?: string; comment?: string[]; handoffHash?: string; reviewer?: string; key?: string },
): Promise<CommandResult> {
  const store = storeOption(o);
  const raw = o.comment ?? [];
  // The count is checked before any comment is parsed; each text's size and item are checked against the frozen revision.
  if (raw.length > MAX_COMMENTS)
    throw new UsageError(`${raw.length} --comment options is over the limit of ${MAX_COMMENTS} for one review; put the rest in --feedback`);
  const r = await reviewPairPlan({
    run: runFile,
    store,
    planner: parsePromptId(id, "planner"),
    decision: o.decision as ReviewDecision,
    feedback: o.feedback === undefined ? undefined : parseText(o.feedback, "--feedback"),
    comments: raw.map(parseCommentOption),
    handoffHash: o.handoffHash === undefined ? undefined : parseHashOption(o.handoffHash),
    reviewer: o.reviewer === undefined ? undefined : parseName(o.reviewer, "--reviewer"),
    key: keyOption(o.key),
  });
  const w = r.workflow;
  // The command lines come from pair-status's one legal next step, with --key where the suite signs receipts.
  const legal = async () => (await pairStatusFromRun(store, runFile, w.planner, new Date(), r.run)).next_command;
  const next =
    w.state === "plan_review_pending"
      ? `more approvals are required; another reviewer runs: ${await legal()}`
      : w.state === "plan_revision_pending"
        ? `revise the handoff, then: ${await legal()}`
        : w.state === "execution_consent_pending"
          ? `twinlock pair-status ${shellQuote(runFile)} ${w.planner}  (asks the consent question)`
          : w.state === "closed"
            ? "the workflow is closed without execution"
            : undefined;
  const text = [
    `recorded review of ${w.planner} revision ${r.receipt.revision}: ${r.receipt.decision} by ${r.receipt.reviewer}${r.receipt.signature ? " (signed)" : ""}`,
    ...(r.receipt.feedback ? [`  feedback: ${r.receipt.feedback}`] : []),
    ...(r.receipt.comments ?? []).map((c) => `  comment on ${c.item} (${c.kind}): ${c.text}`),
    `state: ${w.state}${stateInWords(w.state)}`,
    ...(next ? [`next: ${next}`] : []),
  ].join("\n");
  return { exitCode: 0, text, json: { ok: true, state: w.state, receipt: r.receipt } };
}
