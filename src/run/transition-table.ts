/**
 * The runtime's transition table (SPEC §5), as data. The runtime moves
 * workflows only along these rows, and `validate`'s state-machine check
 * searches this very table, so the two can never disagree.
 */
export const STATES = [
  "investigating",
  "handoff_frozen",
  "plan_review_pending",
  "plan_revision_pending",
  "execution_consent_pending",
  "approval_pending",
  "dry_run_ready",
  "executing",
  "closed",
  "failed",
] as const;

export type State = (typeof STATES)[number];

/** What moves a workflow; each is recorded as an event of the same name. */
export const TRANSITION_EVENTS = [
  "handoff_frozen",
  "review_requested",
  "changes_requested",
  "approval_recorded",
  "plan_approved",
  "plan_declined",
  "consent_granted",
  "consent_declined",
  "apply_approved",
  "dry_run_admitted",
  "dry_run_result",
  "admitted",
  "closed",
  "failed",
] as const;

export type TransitionEvent = (typeof TRANSITION_EVENTS)[number];

export interface Transition {
  from: State;
  event: TransitionEvent;
  to: State;
  /** Which path this row is for, when an event has more than one target. */
  when?: "dry_run_path" | "apply_approved_path" | "material_edit";
}

const FREEZABLE_AFTER_REVIEW: State[] = ["plan_review_pending", "execution_consent_pending", "approval_pending", "dry_run_ready"];
const ACTIVE: State[] = STATES.filter((s) => s !== "closed" && s !== "failed");

/** Every legal move. A move not listed here is refused with the current state and the legal next step. */
export const TRANSITIONS: readonly Transition[] = [
  { from: "investigating", event: "handoff_frozen", to: "handoff_frozen" },
  { from: "plan_revision_pending", event: "handoff_frozen", to: "handoff_frozen" },
  ...FREEZABLE_AFTER_REVIEW.map((from): Transition => ({ from, event: "handoff_frozen", to: "handoff_frozen", when: "material_edit" })),
  { from: "handoff_frozen", event: "review_requested", to: "plan_review_pending" },
  { from: "plan_review_pending", event: "changes_requested", to: "plan_revision_pending" },
  // One approval of several required (required_approvals): recorded, still in review.
  { from: "plan_review_pending", event: "approval_recorded", to: "plan_review_pending" },
  { from: "plan_review_pending", event: "plan_approved", to: "execution_consent_pending" },
  { from: "plan_review_pending", event: "plan_declined", to: "closed" },
  { from: "execution_consent_pending", event: "consent_granted", to: "dry_run_ready", when: "dry_run_path" },
  { from: "execution_consent_pending", event: "consent_granted", to: "approval_pending", when: "apply_approved_path" },
  { from: "execution_consent_pending", event: "consent_declined", to: "closed" },
  // A consent that expired unused may be asked again (renewed) or refused (withdrawn); the gate
  // allows these only once the current consent has expired. A renewed APPLY_APPROVED consent needs
  // a new apply approval, bound to it.
  { from: "dry_run_ready", event: "consent_granted", to: "dry_run_ready", when: "dry_run_path" },
  { from: "dry_run_ready", event: "consent_granted", to: "approval_pending", when: "apply_approved_path" },
  { from: "approval_pending", event: "consent_granted", to: "approval_pending", when: "apply_approved_path" },
  { from: "dry_run_ready", event: "consent_declined", to: "closed" },
  { from: "approval_pending", event: "consent_declined", to: "closed" },
  { from: "approval_pending", event: "apply_approved", to: "dry_run_ready" },
  // A dry run of the consented plan (for executors with dry_run_required) and its result; the workflow stays ready.
  { from: "dry_run_ready", event: "dry_run_admitted", to: "dry_run_ready" },
  { from: "dry_run_ready", event: "dry_run_result", to: "dry_run_ready" },
  { from: "dry_run_ready", event: "admitted", to: "executing" },
  ...ACTIVE.map((from): Transition => ({ from, event: "closed", to: "closed" })),
  ...ACTIVE.map((from): Transition => ({ from, event: "failed", to: "failed" })),
];

/** The states a workflow can leave; `closed` and `failed` are final. */
export function isFinal(state: State): boolean {
  return state === "closed" || state === "failed";
}

/** The rows leaving `state`, in table order. */
export function transitionsFrom(state: State, table: readonly Transition[] = TRANSITIONS): Transition[] {
  return table.filter((t) => t.from === state);
}

/** Find the row for `event` from `state` (and path, when it matters), or undefined when illegal. */
export function findTransition(
  state: State,
  event: TransitionEvent,
  when?: Transition["when"],
  table: readonly Transition[] = TRANSITIONS,
): Transition | undefined {
  return table.find((t) => t.from === state && t.event === event && (t.when === undefined || when === undefined || t.when === when));
}
