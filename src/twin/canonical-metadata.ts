/**
 * The exact frontmatter values SPEC §2 requires of each member of a pair.
 * `"<twin>"` stands for the other member's prompt ID.
 */
export const TWIN = "<twin>" as const;

export const PLANNER_CANONICAL: Readonly<Record<string, unknown>> = {
  prompt_role: "investigative",
  pairing_required: true,
  paired_prompt_id: TWIN,
  plan_review_required: true,
  execution_consent_required: true,
  exact_twin_only: true,
  review_cycle: "review_revise_refreeze_rereview_then_consent",
};

export const EXECUTOR_CANONICAL: Readonly<Record<string, unknown>> = {
  prompt_role: "executive",
  pairing_required: true,
  paired_prompt_id: TWIN,
  accepted_planning_prompt_id: TWIN,
  reviewed_handoff_required: true,
  execution_consent_required: true,
  exact_twin_only: true,
};

/** Keys whose names mention twins or executors but are the sanctioned single source of truth. */
export const SANCTIONED_TWIN_KEYS = new Set([
  "paired_prompt_id",
  "accepted_planning_prompt_id",
  "exact_twin_only",
  "pairing_required",
  "execution_consent_required",
  "reviewed_handoff_required",
  "plan_review_required",
]);
