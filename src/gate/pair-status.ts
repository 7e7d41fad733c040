import path from "node:path";
import { RefusalError } from "../errors/errors.js";
import { hashHandoff } from "../handoff/hash-handoff.js";
import type { GateHome } from "../home/gate-home.js";
import { readRun } from "../home/run-ledger.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { describeChanges } from "../run/admission-checks.js";
import { describeNextStep, shellQuote } from "../run/next-step.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import type { Settings } from "../run/run-schema.js";
import type { State } from "../run/transition-table.js";
import type { Suite } from "../suite/load-suite.js";
import { resolveExactTwin } from "../twin/resolve-exact-twin.js";
import { consentQuestion } from "./consent-pair-execution.js";

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
  return `Please review revision ${revision} of ${planner}'s frozen plan (${hash ?? "hash shown after freezing"}). Request any changes, improvements, additions, removals or refinements — or approve this exact version. Feedback is recorded and is never taken as approval.`;
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
  const next = describeNextStep(state, { run: "RUN", planner: planner.id, executor: executor.id });
  return {
    planner: planner.id,
    executor: executor.id,
    executor_title: wf.executor_title,
    state,
    revision: 0,
    handoff_hash: null,
    next_action: next.action,
    next_command: next.command,
    question: questionFor(state, wf),
    authorized_execution_prompt_ids: [],
    handoff_changed: null,
    unresolved_stops: [],
    source: "stateless",
  };
}

/** Status of one pair from a run file. */
export async function pairStatusFromRun(runFile: string, id: string, home: GateHome, now: Date = new Date()): Promise<PairStatus> {
  const run = readRun(runFile, home);
  const byExecutor = Object.values(run.state.workflows).find((w) => w.executor === id);
  const wf = byExecutor ?? requireWorkflow(run.state.workflows, id);
  let next = describeNextStep(wf.state, { run: runFile, planner: wf.planner, executor: wf.executor, hash: wf.handoff?.hash });
  const last = wf.consents[wf.consents.length - 1];
  const expired =
    (wf.state === "dry_run_ready" || wf.state === "approval_pending") &&
    last?.expires_at != null &&
    last.consumed_at === null &&
    now.getTime() >= Date.parse(last.expires_at);
  if (expired) {
    next = {
      action: `ask the consent question again: the consent expired at ${last?.expires_at} unused (or withdraw it with --decline)`,
      command: `twinlock consent-pair-execution ${shellQuote(runFile)} ${wf.planner} --approve|--decline --handoff-hash ${wf.handoff?.hash}`,
    };
  }
  // A frozen handoff edited since: the one legal step is to re-freeze it (admission would refuse anyway).
  let handoffChanged: string[] | null = null;
  if (wf.handoff && REHASHED_STATES.has(wf.state)) {
    try {
      const current = await hashHandoff(path.resolve(path.dirname(path.resolve(runFile)), wf.handoff.dir));
      if (current.hash !== wf.handoff.hash) handoffChanged = describeChanges(wf.handoff.files, current.files);
    } catch (error) {
      handoffChanged = [(error as Error).message];
    }
  }
  if (handoffChanged) {
    next = {
      action: `re-freeze: the handoff changed since revision ${wf.revision} was frozen (${handoffChanged.join(", ") || "content differs"}); decisions on revision ${wf.revision} will not carry over`,
      command: `twinlock freeze-pair-handoff ${shellQuote(runFile)} ${wf.planner}`,
    };
  }
  const signing = signingHint(home, run.state.suite);
  if (signing && /review-pair-plan|consent-pair-execution|approve-apply/.test(next.command))
    next = { ...next, command: `${next.command} --key FILE` };
  return {
    planner: wf.planner,
    executor: wf.executor,
    executor_title: wf.executor_title,
    state: wf.state,
    revision: wf.revision,
    handoff_hash: wf.handoff?.hash ?? null,
    next_action: next.action,
    next_command: next.command,
    question: expired ? consentQuestion(wf, run.state.settings) : questionFor(wf.state, wf, run.state.settings),
    authorized_execution_prompt_ids: run.state.authorized_execution_prompt_ids,
    handoff_changed: handoffChanged,
    unresolved_stops: run.state.stops
      .filter((s) => s.resolved_at === null && (s.workflow === null || s.workflow === wf.planner))
      .map((s) => `!STOP:${s.reason}`),
    source: "run",
  };
}

function questionFor(
  state: State,
  wf: { planner: string; executor: string; executor_title: string; revision: number; handoff: { hash: string } | null },
  settings?: Settings,
): string | null {
  if (state === "plan_review_pending") return reviewInvitation(wf.planner, wf.revision, wf.handoff?.hash ?? null);
  if (state === "execution_consent_pending") return consentQuestion(wf, settings);
  return null;
}

/** States in which a frozen handoff must still hash to its frozen value. */
const REHASHED_STATES = new Set<State>(["plan_review_pending", "execution_consent_pending", "approval_pending", "dry_run_ready"]);

/** Whether the pinned suite asks for signed receipts (so printed commands need `--key FILE`); a suite that cannot be loaded is treated as signing. */
export function signingHint(home: GateHome, suite: { root: string; suite_id: string }): boolean {
  try {
    return loadPinnedPolicy(home, suite).config.policies?.require_signed_receipts === true;
  } catch {
    return true;
  }
}
