import { RefusalError } from "../errors/errors.js";
import { describeNextStep, type NextStepData, nextStepData, withKeyWhenSigning } from "../run/next-step.js";
import type { Settings } from "../run/run-schema.js";
import type { State } from "../run/transition-table.js";
import type { Suite } from "../suite/load-suite.js";
import { resolveExactTwin } from "../twin/resolve-exact-twin.js";
import { consentQuestion } from "./consent-question.js";

/** What `pair-status` reports: the exact twin, the state, and the one legal next step. */
export interface PairStatus {
  planner: string;
  executor: string;
  executor_title: string;
  state: State;
  revision: number;
  handoff_hash: string | null;
  next_action: string;
  next_command: string;
  /** The next step as data, for a front end to render (the CLI prints next_command). */
  next_step: NextStepData;
  /** The review invitation or the consent question, when one is due; otherwise null. */
  question: string | null;
  authorized_execution_prompt_ids: string[];
  /** Files changed since the freeze (re-hashed now), or null when the folder still matches. */
  handoff_changed: string[] | null;
  unresolved_stops: string[];
  source: "stateless" | "run";
}

export const REVIEW_STATUSES = ["pending", "changes_requested", "approved", "declined"] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** The invitation to review an exact frozen revision; feedback is welcome and never counts as approval. */
export function reviewInvitation(planner: string, revision: number, hash: string | null): string {
  // Revision 0 is the stateless form's: no run, so no revision number yet.
  return `Please review ${revision > 0 ? `revision ${revision} of ${planner}'s frozen plan` : `${planner}'s frozen plan`} (${hash ?? "hash shown after freezing"}). Request any changes, improvements, additions, removals or refinements — or approve this exact version. Feedback is recorded and is never taken as approval.`;
}

/**
 * Stateless status (as in the source): where a pair stands given whether its
 * handoff is ready and what the review said. The twin always comes from the
 * one resolver; no other executor is ever offered.
 */
export function pairStatusFromFlags(suite: Suite, id: string, flags: { handoffReady?: boolean; reviewStatus?: ReviewStatus }): PairStatus {
  const prompt = suite.byId.get(id);
  const plannerId = prompt?.role === "executive" && prompt.pairedPromptId ? prompt.pairedPromptId : id;
  const resolved = resolveExactTwin(suite, plannerId);
  if (!resolved.ok) throw new RefusalError(`${id} has no exact twin: ${resolved.reasons.join("; ")}`);
  const { planner, executor } = resolved.twin;
  let state: State = "investigating";
  if (flags.handoffReady) {
    state = (
      {
        pending: "plan_review_pending",
        changes_requested: "plan_revision_pending",
        approved: "execution_consent_pending",
        declined: "closed",
      } as const
    )[flags.reviewStatus ?? "pending"];
  } else if (flags.reviewStatus !== undefined && flags.reviewStatus !== "pending") {
    throw new RefusalError(
      `--review-status ${flags.reviewStatus} without --handoff-ready: a plan is reviewed only after its handoff is ready and frozen`,
    );
  }
  const wf = { planner: planner.id, executor: executor.id, executor_title: executor.title ?? executor.id, revision: 0, handoff: null };
  const step = describeNextStep(state, { run: "RUN", planner: planner.id, executor: executor.id });
  // The suite says whether decisions are signed: its commands then need --key, as the run form's do.
  const signing = suite.config.policies?.require_signed_receipts === true;
  const next = withKeyWhenSigning(step, signing);
  return {
    planner: planner.id,
    executor: executor.id,
    executor_title: wf.executor_title,
    state,
    revision: 0,
    handoff_hash: null,
    next_action: next.action,
    next_command: next.command,
    next_step: nextStepData(next),
    question: questionFor(state, wf),
    authorized_execution_prompt_ids: [],
    handoff_changed: null,
    unresolved_stops: [],
    source: "stateless",
  };
}

/** The review invitation or the consent question due in `state`, if any. */
export function questionFor(
  state: State,
  wf: { planner: string; executor: string; executor_title: string; revision: number; handoff: { hash: string } | null },
  settings?: Settings,
): string | null {
  if (state === "plan_review_pending") return reviewInvitation(wf.planner, wf.revision, wf.handoff?.hash ?? null);
  if (state === "execution_consent_pending") return consentQuestion(wf, settings);
  return null;
}
