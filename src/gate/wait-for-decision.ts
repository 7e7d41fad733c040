import { RefusalError, UsageError } from "../errors/errors.js";
import { onOutboxRing } from "../notify/outbox-signal.js";
import type { RunState } from "../run/run-schema.js";
import type { RunStore } from "../store/run-store.js";
import type { ReviewComment } from "./review-comments.js";

/** Longest one wait may last (a front end's long poll stays under its own request timeouts). */
export const MAX_WAIT_MS = 120_000;

/** A person's decision on a frozen plan, as the planner needs it: what, on which revision, and the reviewer's words. */
export interface PlanDecision {
  decision: "approved" | "changes_requested" | "declined";
  revision: number;
  handoff_hash: string;
  reviewer: string;
  /** The reviewer's feedback (on changes requested, what to change); null when none was given. */
  feedback: string | null;
  /** The reviewer's comments on items of the revision (record IDs or `PATH:LINE`), in the order given; empty when none. */
  comments: ReviewComment[];
  at: string;
}

/** A stop that holds the pair (a person lifts it; an admission is refused meanwhile). */
export interface OpenStop {
  seq: number;
  reason: string;
}

/** What a wait ends with: a decision, the pair finished, or nothing yet when the time ran out (with the revision and hash that wait); with the stops that hold the pair. */
export type DecisionWait = (
  | { status: "decided"; decision: PlanDecision }
  | { status: "finished" }
  | { status: "waiting"; revision: number; hash: string }
) & { state: string; stops: OpenStop[] };

export interface WaitOptions {
  /** How long to wait before answering "waiting" (at most MAX_WAIT_MS). */
  timeoutMs?: number;
  /** How often the store is read besides when this process rings (another process's decisions). */
  pollMs?: number;
}

/**
 * Wait, without the caller polling, for a person's decision on `planner`'s
 * plan at revision `sinceRevision` or a later one (issue 27): resolves as
 * soon as the store holds it (woken at once by a decision made in this
 * process, within `pollMs` by another's), or when a stop is raised on the
 * pair, or the pair is finished, or the time runs out, or `signal` aborts.
 * An approval is the plan's decision once the plan is approved (every
 * required approval given), not a first of several. Every front end (MCP,
 * the SDK adapters) calls this one function.
 */
export async function waitForDecision(
  store: RunStore,
  run: string,
  planner: string,
  sinceRevision: number,
  signal?: AbortSignal,
  options: WaitOptions = {},
): Promise<DecisionWait> {
  if (!Number.isInteger(sinceRevision) || sinceRevision < 1)
    throw new UsageError(`revision ${sinceRevision} is not a revision number; give the revision you froze (1 or more)`);
  const timeoutMs = Math.min(Math.max(options.timeoutMs ?? 50_000, 0), MAX_WAIT_MS);
  const pollMs = options.pollMs ?? 1_000;
  const deadline = Date.now() + timeoutMs;
  let runId: string | undefined;
  for (;;) {
    const loaded = await store.read(run);
    runId = loaded.state.run_id;
    const found = judge(loaded.state, planner, sinceRevision);
    if (found.status !== "waiting" || signal?.aborted || Date.now() >= deadline) return found;
    await nextChance(runId, Math.min(pollMs, deadline - Date.now()), signal);
  }
}

/** Whether the run holds what the wait is for, now (pure). */
export function judge(state: RunState, planner: string, sinceRevision: number): DecisionWait {
  const wf = Object.hasOwn(state.workflows, planner) ? state.workflows[planner] : undefined;
  if (!wf) throw new RefusalError(`planner ${planner} is not in run ${state.run_id}`, { code: "UNKNOWN_PAIR" });
  if (!wf.handoff)
    throw new RefusalError(
      `nothing of ${planner}'s is frozen yet, so there is no review to wait for: a submit that was refused froze nothing (what it said is what the person must do); submit the handoff first`,
      { code: "NOT_FROZEN", planner },
    );
  if (sinceRevision > wf.revision)
    throw new UsageError(`${planner} has no revision ${sinceRevision} yet (it is at revision ${wf.revision}); give the revision you froze`);
  const stops = state.stops
    .filter((s) => s.resolved_at === null && (s.workflow === null || s.workflow === planner))
    .map((s) => ({ seq: s.seq, reason: s.reason }));
  const review = [...wf.reviews]
    .reverse()
    .find((r) => r.revision >= sinceRevision && (r.decision !== "approved" || wf.state !== "plan_review_pending"));
  if (review)
    return {
      status: "decided",
      state: wf.state,
      stops,
      decision: {
        decision: review.decision,
        revision: review.revision,
        handoff_hash: review.handoff_hash,
        reviewer: review.reviewer,
        feedback: review.feedback,
        comments: review.comments ?? [],
        at: review.at,
      },
    };
  if (wf.state === "closed" || wf.state === "failed") return { status: "finished", state: wf.state, stops };
  return { status: "waiting", state: wf.state, revision: wf.revision, hash: wf.handoff.hash, stops };
}

/** Resolve on this process's ring for the run, after `ms`, or on abort, whichever is first. */
function nextChance(runId: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      off();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(ms, 0));
    const off = onOutboxRing((id) => {
      if (id === runId) done();
    });
    signal?.addEventListener("abort", done, { once: true });
  });
}
