import type { State } from "./transition-table.js";

/** The one legal next step from each state, as a person would be told it. */
export const NEXT_STEP: Record<State, { action: string; command: string }> = {
  investigating: { action: "freeze the handoff", command: "twinlock freeze-pair-handoff RUN PLANNER --handoff DIR" },
  handoff_frozen: { action: "present the frozen plan for review", command: "twinlock present RUN PLANNER" },
  plan_review_pending: {
    action: "review the frozen plan: request changes, approve or decline",
    command: "twinlock review-pair-plan RUN PLANNER --decision changes_requested|approved|declined --handoff-hash HASH",
  },
  plan_revision_pending: {
    action: "revise the handoff, re-run readiness and re-freeze it",
    command: "twinlock freeze-pair-handoff RUN PLANNER",
  },
  execution_consent_pending: {
    action: "answer the execution consent question",
    command: "twinlock consent-pair-execution RUN PLANNER --approve|--decline --handoff-hash HASH",
  },
  approval_pending: { action: "record the separate apply approval", command: "twinlock approve-apply RUN PLANNER --approver NAME" },
  dry_run_ready: { action: "admit the exact twin", command: "twinlock admit RUN EXECUTOR" },
  executing: { action: "close the workflow with its result", command: "twinlock close RUN PLANNER --result verified|failed|rolled_back" },
  closed: { action: "none: the workflow is closed", command: "" },
  failed: { action: "none: the workflow failed; start a new run", command: "" },
};

/** The next step with the run file, planner, executor and hash filled in. */
export function describeNextStep(
  state: State,
  fill: { run: string; planner: string; executor: string; hash?: string | null },
): {
  action: string;
  command: string;
} {
  const step = NEXT_STEP[state];
  const command = step.command
    .replace("RUN", shellQuote(fill.run))
    .replace("PLANNER", fill.planner)
    .replace("EXECUTOR", fill.executor)
    .replace("HASH", fill.hash ?? "sha256:…");
  return { action: step.action, command };
}

/** Quote a path for a shell command line only when it needs it. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
