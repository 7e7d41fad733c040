import type { State } from "./transition-table.js";

const WORDS: Record<State, string> = {
  investigating: "investigating",
  handoff_frozen: "handoff frozen",
  plan_review_pending: "plan review pending",
  plan_revision_pending: "plan revision pending",
  execution_consent_pending: "execution consent pending",
  approval_pending: "apply approval pending",
  dry_run_ready: "ready for a dry run or admission",
  executing: "executing",
  closed: "closed",
  failed: "failed",
};

/** A workflow state in words, for the page (where its own name stays in the HTML as a class and `data-state`) and the CLI. */
export function describeState(state: State): string {
  return Object.hasOwn(WORDS, state) ? WORDS[state] : String(state).replace(/_/g, " ");
}
