import "../schemas/zod-setup.js";
import { z } from "zod";
import { REVIEW_DECISIONS } from "../gate/review-pair-plan.js";
import {
  AdmissionCheckSchema,
  ApplyApprovalSchema,
  ConsentReceiptSchema,
  handoffHash,
  MAX_STOPS_PER_LIFT,
  promptId,
  ReviewReceiptSchema,
  RunStateSchema,
  StopResolutionSchema,
  WorkflowSchema,
} from "../run/run-schema.js";
import { MODES } from "../suite/prompt.js";

const text = z.string().max(64 * 1024);
const stopReason = z.string().regex(/^[a-z0-9][a-z0-9-]{0,119}$/, "lowercase letters, digits and hyphens");

/** Freeze the planner's handoff (agent token `freeze`): the folder defaults to the one the run records. */
export const FreezeRequest = z
  .object({
    handoff_dir: z.string().min(1).max(4096).optional(),
    /** Why an unchanged handoff is frozen again after changes were requested (shown to the reviewer). */
    unchanged_because: z
      .string()
      .min(1)
      .max(64 * 1024)
      .optional(),
  })
  .strict();
/** Record a review of the exact revision shown (passkey). */
export const ReviewRequest = z
  .object({
    handoff_hash: handoffHash,
    decision: z.enum(REVIEW_DECISIONS),
    feedback: text.optional(),
    /** Comments on items of the revision (a record ID or PATH:LINE); the gate checks their count, size and items. */
    comments: z
      .array(z.object({ item: z.string().min(1).max(4096), text }).strict())
      .max(1000)
      .optional(),
    executor_digest: z.optional(handoffHash),
  })
  .strict();
/**
 * Consent to run exactly the twin (passkey). The mode, environment, scope
 * and budget are the run's; the form repeats what it showed, and a
 * mismatch is refused as stale.
 */
export const ConsentRequest = z
  .object({
    handoff_hash: handoffHash,
    approve: z.boolean(),
    /** The executor file's digest the page showed; a file changed since is refused. */
    executor_digest: z.optional(handoffHash),
    mode: z.enum(MODES).optional(),
    environment: z.string().max(200).optional(),
    actions: z.union([z.literal("all"), z.array(z.string().max(200)).max(10_000)]).optional(),
    budget: z.number().int().min(0).nullable().optional(),
    expires_in_minutes: z
      .number()
      .int()
      .min(1)
      .max(60 * 24 * 30)
      .optional(),
  })
  .strict();
/** Approve applying the consented plan (passkey with the `apply` right). */
export const ApplyApprovalRequest = z.object({ handoff_hash: handoffHash }).strict();
/** Raise a hard stop (anyone signed in, or a script's key: no signature needed to stop). */
export const StopRequest = z.object({ reason: stopReason, workflow: z.optional(promptId), note: text.optional() }).strict();
/**
 * Lift hard stops (passkey with the `stop` right): exactly the stops named by
 * number (their `stop_raised` events' sequence numbers), each of `reason`.
 * The passkey's challenge is the receipt naming them, so a stop raised after
 * the challenge was made is never lifted by it. A form sends `stops` as
 * comma-separated numbers.
 */
export const LiftStopRequest = z
  .object({
    reason: stopReason,
    workflow: z.optional(promptId),
    stops: z.array(z.number().int().min(1)).min(1).max(MAX_STOPS_PER_LIFT),
    note: text.min(1),
  })
  .strict();
/** Ask whether admission would pass now (agent token `admission_check`): every check, nothing recorded. */
export const AdmissionCheckRequest = z
  .object({
    planner: z.optional(promptId),
    mode: z.enum(MODES).optional(),
    environment: z.string().max(200).optional(),
    actions: z.array(z.string().max(200)).max(10_000).optional(),
  })
  .strict();
/** Report how the executor's work ended (agent token `result`). */
export const ResultRequest = z
  .object({ result: z.enum(["verified", "failed", "rolled_back", "abandoned"]), residual: text.optional() })
  .strict();

/**
 * Close an executing pair as verified (passkey with the `verify` right): the
 * executed change the person checked (each changed path with its sha256, or
 * null when deleted) and each acceptance criterion's result with the command
 * run, held against the admitted plan; the receipt binds them. A form sends
 * the files as lines and each criterion as its own fields.
 */
export const VerifiedCloseRequest = z
  .object({
    handoff_hash: handoffHash,
    changed_files: z
      .array(z.object({ path: z.string().min(1).max(4096), sha256: z.union([handoffHash, z.null()]) }).strict())
      .min(1)
      .max(10_000),
    criteria: z
      .array(
        z
          .object({
            id: z.string().min(1).max(200),
            result: z.enum(["passed", "failed"]),
            command: z.string().min(1).max(4096),
          })
          .strict(),
      )
      .max(1000),
    residual: text.optional(),
  })
  .strict();

/** A decision's answer: the state the workflow is in now, and its receipt. */
export const DecisionResponse = z.object({
  ok: z.literal(true),
  state: z.string(),
  location: z.string(),
  receipt: z.union([ReviewReceiptSchema, ConsentReceiptSchema, ApplyApprovalSchema, StopResolutionSchema]).nullable(),
});
/** The first half of a passkey decision: the WebAuthn request whose challenge is the receipt's signing hash. */
export const ChallengeResponse = z.object({
  ok: z.literal(true),
  challenge_id: z.string(),
  options: z.record(z.string(), z.unknown()),
});
/** A run as the API shows it. */
export const RunResponse = z.object({ ok: z.literal(true), run_id: z.string(), revision: z.number(), state: RunStateSchema });
/** One pair of a run. */
export const WorkflowResponse = z.object({ ok: z.literal(true), workflow: WorkflowSchema });
/** Whether admission would pass, check by check. */
export const AdmissionCheckResponse = z.object({
  ok: z.literal(true),
  would_admit: z.boolean(),
  checks: z.array(AdmissionCheckSchema),
});
/** Every error: a stable code, one line, and data. */
export const ProblemResponse = z.object({
  ok: z.literal(false),
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
});
