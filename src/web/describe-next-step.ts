import type { NextStepData } from "../run/next-step.js";

/** Each gate operation as a sentence for a person at the page; `{who}` is the prompt the step names (the planner or the executor). */
const SENTENCES = new Map<string, string>(
  Object.entries({
    "freeze-pair-handoff": "Waiting for the planner {who} to freeze its handoff (again, if changes were asked for or the files changed).",
    present: "The plan of {who} is frozen and waits to be presented for review.",
    "review-pair-plan": "Review the frozen plan of {who}: request changes, approve it or decline it.",
    "consent-pair-execution": "Answer the consent question: may the executor of {who} act on the approved plan?",
    "approve-apply": "Record the separate apply approval for {who}.",
    "dry-run": "Waiting for a dry run of {who}: it must pass before it is admitted in an apply mode.",
    admit: "Waiting for {who} to be admitted: every admission check must pass.",
    exec: "Waiting for {who} to be started through the gate and admitted: every admission check must pass.",
    close: "{who} is executing; waiting for its result.",
  }),
);

/**
 * A next step (as the library gives it, as data) in words for the review
 * page, never a command line: what the reviewer can do here, or what the
 * workflow waits for. An operation this page does not know is named as it is.
 */
export function describeNextStep(step: NextStepData): string {
  if (step.operation === null) return "Nothing more to do: this workflow is over.";
  // The first argument is the run; the second names the prompt the step acts on.
  const who = step.args[1] ?? "this pair";
  const sentence = SENTENCES.get(step.operation);
  return sentence === undefined ? `Next: ${step.operation} for ${who}.` : sentence.replace("{who}", who);
}
