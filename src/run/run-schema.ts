import "../schemas/zod-setup.js";
import { z } from "zod";
import { HASH_PATTERN } from "../crypto/canonical-hash.js";
import { ManifestEntrySchema } from "../handoff/manifest-schema.js";
import { WebAuthnSignatureSchema } from "../passkey/webauthn-signature.js";
import { MODES, PROMPT_ID_PATTERN } from "../suite/prompt.js";
import { STATES, TRANSITION_EVENTS } from "./transition-table.js";

const MAX_TEXT = 64 * 1024;
export const promptId = z.string().regex(PROMPT_ID_PATTERN);
export const handoffHash = z.string().regex(HASH_PATTERN, "sha256:<64 hex digits>");
const isoTime = z.string().datetime({ offset: true });
const name = z.string().min(1).max(200);
/** A run's ID: random, and safe as a file name in the gate home. */
export const RUN_ID_PATTERN = /^run_[0-9a-f]{16}$/;
export const runId = z.string().regex(RUN_ID_PATTERN, "run_ followed by 16 hex digits");
/** A gate home's identity. */
export const homeId = z.string().regex(/^home_[0-9a-f]{16}$/, "home_ followed by 16 hex digits");
const text = z.string().max(MAX_TEXT);
export const stopReason = z.string().regex(/^[a-z0-9][a-z0-9-]{0,119}$/);

/** A detached Ed25519 signature over a receipt's canonical body (issue 5). */
const Ed25519SignatureSchema = z.object({ public_key: z.string().max(200), signer: name, value: z.string().max(200) }).strict();
/** A receipt's signature: Ed25519 from a key file, or a passkey's WebAuthn assertion. */
export const SignatureSchema = z.union([Ed25519SignatureSchema, WebAuthnSignatureSchema]);

/** What a run was created for: the consent binds these and admission checks requests against them. */
export const SettingsSchema = z
  .object({
    mode: z.enum(MODES),
    environment: name,
    actions: z.union([z.literal("all"), z.array(z.string().max(200)).max(10_000)]),
    budget: z.number().int().min(0).nullable(),
  })
  .strict();

/** SPEC §5 review receipt: feedback is recorded and is never approval. */
export const ReviewReceiptSchema = z
  .object({
    kind: z.literal("review"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    reviewer: name,
    decision: z.enum(["changes_requested", "approved", "declined"]),
    feedback: text.nullable(),
    handoff_hash: handoffHash,
    revision: z.number().int().min(1),
    /** sha256 of the pinned suite's twinlock.yaml the decision was made under. */
    policy_digest: handoffHash,
    /** sha256 of the executor prompt's whole file (frontmatter and body) the reviewer's plan is for. */
    executor_digest: handoffHash,
    at: isoTime,
    signature: SignatureSchema.optional(),
  })
  .strict();

/** SPEC §5 consent receipt: names the executor's ID and title and binds the run's limits. */
export const ConsentReceiptSchema = z
  .object({
    kind: z.literal("consent"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    executor_title: name,
    user: name,
    decision: z.enum(["approved", "declined"]),
    handoff_hash: handoffHash,
    revision: z.number().int().min(1),
    mode: z.enum(MODES),
    environment: name,
    actions: z.union([z.literal("all"), z.array(z.string().max(200)).max(10_000)]),
    budget: z.number().int().min(0).nullable(),
    expires_at: isoTime.nullable(),
    policy_digest: handoffHash,
    executor_digest: handoffHash,
    at: isoTime,
    signature: SignatureSchema.optional(),
  })
  .strict();

/** The separate apply approval of the APPLY_APPROVED path, bound to the hash and the consent. */
export const ApplyApprovalSchema = z
  .object({
    kind: z.literal("apply_approval"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    approver: name,
    handoff_hash: handoffHash,
    revision: z.number().int().min(1),
    consent_hash: handoffHash,
    at: isoTime,
    signature: SignatureSchema.optional(),
  })
  .strict();

export const AdmissionCheckSchema = z
  .object({ id: z.string().max(40), name: z.string().max(200), ok: z.boolean(), detail: z.string().max(MAX_TEXT) })
  .strict();

/** What admission checked and found, recorded when it lets an executor start. */
export const AdmissionReceiptSchema = z
  .object({
    kind: z.literal("admission"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    handoff_hash: handoffHash,
    revision: z.number().int().min(1),
    consent_hash: handoffHash,
    requested: z
      .object({ mode: z.enum(MODES), environment: name, actions: z.array(z.string().max(200)), budget: z.number().int().min(0).nullable() })
      .strict(),
    checks: z.array(AdmissionCheckSchema),
    actor: name,
    at: isoTime,
  })
  .strict();

/** A freeze, signed on signing suites by a key with the `freeze` right: separation of duties compares this key. */
export const FreezeReceiptSchema = z
  .object({
    kind: z.literal("freeze"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    by: name,
    handoff_hash: handoffHash,
    revision: z.number().int().min(1),
    at: isoTime,
    signature: SignatureSchema.optional(),
  })
  .strict();

/** Lifting a hard stop, signed on signing suites by a key with the `stop` right. */
export const StopResolutionSchema = z
  .object({
    kind: z.literal("stop_resolution"),
    run_id: runId,
    reason: stopReason,
    workflow: promptId.nullable(),
    by: name,
    resolution: text,
    at: isoTime,
    signature: SignatureSchema.optional(),
  })
  .strict();

/** A person's reading of a dry run's outcome, signed on signing suites by a key with the `apply` right. */
export const DryRunResultSchema = z
  .object({
    kind: z.literal("dry_run_result"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    handoff_hash: handoffHash,
    revision: z.number().int().min(1),
    result: z.enum(["passed", "failed"]),
    note: text,
    by: name,
    at: isoTime,
    signature: SignatureSchema.optional(),
  })
  .strict();
export type DryRunResult = z.infer<typeof DryRunResultSchema>;

/** A dry run of the consented plan: admitted by every check, in DRAFT_ONLY, consuming nothing; then its result. */
export const DryRunSchema = z
  .object({
    handoff_hash: handoffHash,
    revision: z.number().int().min(1),
    admitted_at: isoTime,
    admitted_by: name,
    result: z.enum(["passed", "failed"]).nullable(),
    note: text.nullable(),
    result_at: isoTime.nullable(),
    result_receipt: DryRunResultSchema.nullable(),
  })
  .strict();

export type Settings = z.infer<typeof SettingsSchema>;
export type FreezeReceipt = z.infer<typeof FreezeReceiptSchema>;
export type StopResolution = z.infer<typeof StopResolutionSchema>;
export type ReviewReceipt = z.infer<typeof ReviewReceiptSchema>;
export type ConsentReceipt = z.infer<typeof ConsentReceiptSchema>;
export type ApplyApproval = z.infer<typeof ApplyApprovalSchema>;
export type AdmissionReceipt = z.infer<typeof AdmissionReceiptSchema>;
export type AdmissionCheck = z.infer<typeof AdmissionCheckSchema>;

export const FrozenHandoffSchema = z
  .object({
    revision: z.number().int().min(1),
    hash: handoffHash,
    dir: z.string().min(1).max(4096),
    files: z.array(ManifestEntrySchema),
    frozen_at: isoTime,
    frozen_by: name,
    receipt: FreezeReceiptSchema,
    unchanged_because: text.nullable(),
  })
  .strict();

/**
 * What the executor did, recorded on `close` (issue 13): the changed files
 * with their digests, the verification results per acceptance criterion, and
 * the plan held against them as computed when it was recorded (replay cannot
 * read the frozen bytes, so it keeps this as recorded). Optional: runs closed
 * before it existed, or closed without it, replay as they always did.
 */
export const ExecutionSchema = z
  .object({
    changed_files: z.array(z.object({ path: z.string().min(1).max(4096), sha256: handoffHash.nullable() }).strict()).max(100_000),
    criteria: z
      .array(z.object({ id: z.string().min(1).max(200), result: z.enum(["passed", "failed"]), command: text }).strict())
      .max(10_000),
    conformance: z
      .object({
        actions_not_done: z.array(z.string().max(200)),
        files_outside_plan: z.array(z.string().max(4096)),
        criteria_without_evidence: z.array(z.string().max(200)),
        criteria_failed: z.array(z.string().max(200)),
      })
      .strict(),
  })
  .strict();
export type Execution = z.infer<typeof ExecutionSchema>;

/** One pair's workflow as replay derives it. Receipts are kept whole; validity is judged against the current hash. */
export const WorkflowSchema = z
  .object({
    planner: promptId,
    executor: promptId,
    executor_title: name,
    pair_digest: handoffHash,
    state: z.enum(STATES),
    revision: z.number().int().min(0),
    handoff: FrozenHandoffSchema.nullable(),
    history: z.array(z.object({ revision: z.number().int(), hash: handoffHash, frozen_at: isoTime, seq: z.number().int() }).strict()),
    reviews: z.array(ReviewReceiptSchema),
    consents: z.array(ConsentReceiptSchema.extend({ consumed_at: isoTime.nullable() })),
    apply_approvals: z.array(ApplyApprovalSchema),
    admissions: z.array(AdmissionReceiptSchema),
    dry_runs: z.array(DryRunSchema),
    result: z
      .object({
        outcome: z.enum(["verified", "failed", "rolled_back", "declined", "abandoned"]),
        residual: text.nullable(),
        at: isoTime,
        by: name,
        /** Present only when `close` recorded the executed change. */
        execution: ExecutionSchema.optional(),
      })
      .strict()
      .nullable(),
  })
  .strict();

export const StopSchema = z
  .object({
    reason: stopReason,
    workflow: promptId.nullable(),
    raised_at: isoTime,
    raised_by: name,
    note: text.nullable(),
    resolved_at: isoTime.nullable(),
    resolved_by: name.nullable(),
    resolution: text.nullable(),
    /** The signed receipt that lifted the stop; admission re-judges it under the pinned policy. */
    resolution_receipt: StopResolutionSchema.nullable(),
  })
  .strict();

/** The run's whole state, derived by replaying its events. */
export const RunStateSchema = z
  .object({
    run_id: runId,
    home_id: homeId,
    created_at: isoTime,
    suite: z.object({ root: z.string().min(1).max(4096), suite_id: z.string().min(1).max(200) }).strict(),
    settings: SettingsSchema,
    workflows: z.record(promptId, WorkflowSchema),
    authorized_execution_prompt_ids: z.array(promptId),
    stops: z.array(StopSchema),
  })
  .strict();

export const EVENT_TYPES = ["run_created", ...TRANSITION_EVENTS, "stop_raised", "stop_resolved"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** SPEC §5 event: `prev` is the hash of the previous event, so the log is a hash chain. */
export const EventSchema = z
  .object({
    seq: z.number().int().min(1),
    at: isoTime,
    actor: name,
    type: z.enum(EVENT_TYPES),
    data: z.record(z.string(), z.unknown()),
    prev: handoffHash,
  })
  .strict();

/** The run-file format this version writes; older formats are refused, never upgraded silently. */
export const RUN_FORMAT = "twinlock-run/2";

/** The run file on disk. `revision` counts events and is the compare-and-swap token; `head` hashes the last event. */
export const RunFileSchema = z
  .object({
    format: z.literal(RUN_FORMAT),
    revision: z.number().int().min(1),
    head: handoffHash,
    state: RunStateSchema,
    events: z.array(EventSchema).min(1),
  })
  .strict();

export type Workflow = z.infer<typeof WorkflowSchema>;
export type Stop = z.infer<typeof StopSchema>;
export type RunState = z.infer<typeof RunStateSchema>;
export type RunEvent = z.infer<typeof EventSchema>;
export type RunFile = z.infer<typeof RunFileSchema>;
