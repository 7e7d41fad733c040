import { RefusalError, UsageError } from "../errors/errors.js";
import { readBlob } from "../home/frozen-bytes.js";
import { readFrozenModel } from "../home/frozen-records.js";
import { closestChoice } from "../input/closest-choice.js";
import { requireTransition, requireWorkflow } from "../run/refuse-transition.js";
import type { ReviewReceipt, Workflow } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import { approverIdentity, distinctApprovers } from "../trust/enforce-trust.js";
import { sealReceipt } from "../trust/seal-receipt.js";
import { personForKey } from "../trust/sign-as-reviewer.js";
import type { ReceiptKey } from "../trust/sign-receipt.js";
import { executorDigest, gatherPinned, requireShownExecutor } from "./load-run-suite.js";
import { type CommentDraft, checkReviewComments, countLines, type ReviewComment } from "./review-comments.js";

export const REVIEW_DECISIONS = ["changes_requested", "approved", "declined"] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

export interface ReviewInput {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  planner: string;
  decision: ReviewDecision;
  feedback?: string;
  /** Comments on items of the frozen revision (record IDs or `PATH:LINE`); only with changes_requested, and signed with the rest. */
  comments?: readonly CommentDraft[];
  /** The hash the reviewer read; required to approve, so approval is always of an exact version. */
  handoffHash?: string;
  /** Who reviews; with a key the suite knows, the key's owner (default: TWINLOCK_ACTOR, else the login name). */
  reviewer?: string;
  /** The person's key file, or a passkey signer (the gate server). */
  key?: ReceiptKey;
  /** The executor file's digest the person was shown, when a front end showed it: a file changed since is refused. */
  executorDigest?: string;
  now?: () => Date;
  expectedRevision?: number;
}

/** Throw unless `given` is the frozen hash, naming both. */
export function requireCurrentHash(wf: Workflow, given: string | undefined, what: string, runFile: string): void {
  const current = wf.handoff?.hash;
  if (given === undefined || given === current) return;
  const older = wf.history.find((h) => h.hash === given);
  throw new RefusalError(
    `cannot ${what}: --handoff-hash ${given} is ${older ? `revision ${older.revision}, not the current revision ${wf.revision}` : "not a version of this handoff"}; the current frozen hash is ${current} — read it with \`twinlock present ${runFile} ${wf.planner}\` and decide on that version`,
    // As data for a front end: the page links the current revision instead of repeating the command line.
    { code: "STALE_HASH", given, current, given_revision: older?.revision ?? null, current_revision: wf.revision },
  );
}

/**
 * Record a review decision as a receipt bound to the frozen hash and
 * revision (SPEC §5). Feedback is never approval: only `--decision approved`
 * with the exact hash the reviewer read moves on to execution consent.
 */
export async function reviewPairPlan(input: ReviewInput): Promise<{ run: LoadedRun; receipt: ReviewReceipt; workflow: Workflow }> {
  if (!(REVIEW_DECISIONS as readonly string[]).includes(input.decision)) {
    const meant = closestChoice(input.decision, REVIEW_DECISIONS);
    throw new UsageError(
      `--decision ${JSON.stringify(input.decision.slice(0, 40))} is not one of ${REVIEW_DECISIONS.join(", ")}${meant ? `; did you mean ${meant}?` : ""}`,
    );
  }
  // Gather the pinned suite and the executor's file digest before taking the locks.
  const { workflow, pinned } = await gatherPinned(input.store, input.run, input.planner);
  const execDigest = executorDigest(pinned, workflow);
  requireShownExecutor(workflow, execDigest, input.executorDigest);
  const drafts = input.comments ?? [];
  if (drafts.length > 0 && input.decision !== "changes_requested")
    throw new UsageError(`--comment goes with --decision changes_requested, not ${input.decision}; put the words in --feedback`);
  // Checked against the revision frozen now, outside the locks (its records may be large); the lock below refuses a newer one.
  const checked = drafts.length === 0 ? undefined : commentsOnFrozen(input, workflow, pinned.handoffFormat, drafts);
  const { run, result } = await input.store.update(
    input.run,
    (current) => {
      const wf = requireWorkflow(current.state.workflows, input.planner);
      let event: "changes_requested" | "approval_recorded" | "plan_approved" | "plan_declined" = (
        { changes_requested: "changes_requested", approved: "plan_approved", declined: "plan_declined" } as const
      )[input.decision];
      requireTransition(input.run, wf, event === "plan_approved" ? "plan_approved" : event, `record a review (${input.decision})`);
      const handoff = wf.handoff;
      if (!handoff) throw new RefusalError(`${wf.planner} has no frozen handoff to review`);
      if (input.decision === "approved" && input.handoffHash === undefined) {
        throw new RefusalError(
          `approval must name the exact version approved: pass --handoff-hash ${handoff.hash} (revision ${handoff.revision}) after reading it with \`twinlock present ${input.run} ${wf.planner}\``,
        );
      }
      requireCurrentHash(wf, input.handoffHash, `record a review (${input.decision})`, input.run);
      if (checked && checked.hash !== handoff.hash)
        throw new RefusalError(
          `cannot record a review (changes_requested): revision ${handoff.revision} was frozen while the comments were checked against an earlier one; read it with \`twinlock present ${input.run} ${wf.planner}\` and comment on that version`,
          { code: "STALE_HASH", given: checked.hash, current: handoff.hash },
        );
      if (input.decision === "changes_requested" && !input.feedback?.trim() && !checked) {
        throw new UsageError(
          "--decision changes_requested needs --feedback TEXT saying what to change, or --comment ITEM=TEXT on the items to change",
        );
      }
      if (input.decision === "declined" && !input.feedback?.trim()) {
        throw new UsageError(
          "--decision declined closes the workflow for good; give --feedback TEXT saying why, for the declined-execution record",
        );
      }
      const config = pinned.config;
      const reviewer = personForKey(input.key, input.reviewer, config, "--reviewer");
      const unsigned: ReviewReceipt = {
        kind: "review",
        run_id: current.state.run_id,
        planner: wf.planner,
        executor: wf.executor,
        reviewer,
        decision: input.decision,
        feedback: input.feedback?.trim() ? input.feedback : null,
        ...(checked ? { comments: checked.comments } : {}),
        handoff_hash: handoff.hash,
        revision: handoff.revision,
        policy_digest: pinned.policyDigest,
        executor_digest: execDigest,
        at: (input.now?.() ?? new Date()).toISOString(),
      };
      const receipt = sealReceipt(unsigned, { key: input.key, person: reviewer, right: "review", config, workflow: wf, what: "review" });
      if (input.decision === "approved") {
        const needed = config.policies?.required_approvals ?? 1;
        const approvers = distinctApprovers(wf, config);
        if (approvers.includes(approverIdentity(receipt, config))) {
          throw new RefusalError(
            `refused: ${reviewer} already approved revision ${handoff.revision}; each reviewer counts once, and ${needed} distinct approvals are required`,
            { attack: "duplicate-approval" },
          );
        }
        if (approvers.length + 1 < needed) event = "approval_recorded";
      }
      return { events: [{ type: event, actor: reviewer, data: { planner: wf.planner, receipt } }], result: receipt };
    },
    { now: input.now, expectedRevision: input.expectedRevision },
  );
  return { run, receipt: result, workflow: run.state.workflows[input.planner] as Workflow };
}

/** The drafts checked against the frozen revision `workflow` holds (its records and files, from the gate's frozen bytes), with that revision's hash. */
function commentsOnFrozen(
  input: ReviewInput,
  workflow: Workflow,
  format: Parameters<typeof readFrozenModel>[2],
  drafts: readonly CommentDraft[],
): { hash: string; comments: ReviewComment[] } {
  const handoff = workflow.handoff;
  if (!handoff) throw new RefusalError(`${workflow.planner} has no frozen handoff to comment on`);
  const home = input.store.home;
  const comments = checkReviewComments(drafts, readFrozenModel(home, handoff.files, format), handoff.files, (f) =>
    countLines(readBlob(home, f)),
  );
  return { hash: handoff.hash, comments };
}
