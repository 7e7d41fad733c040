import "../schemas/zod-setup.js";
import { z } from "zod/mini";
import { HASH_PATTERN } from "../crypto/canonical-hash.js";
import { ManifestEntrySchema } from "../handoff/manifest-schema.js";
import { lazySchemasOf } from "../schemas/lazy-schema.js";
import { MODES, PROMPT_ID_PATTERN } from "../suite/prompt.js";
import { CHANGE_REF_PATTERN } from "./change-ref.js";
import { STATES, TRANSITION_EVENTS } from "./transition-table.js";
import { WebAuthnSignatureSchema } from "./webauthn-signature-schema.js";

/** The most characters (UTF-16 code units) a free-text field of a run may hold: a note, a residual, a reason given. */
export const MAX_TEXT = 64 * 1024;
/** The most characters a name (an actor, a reviewer) may hold. */
export const MAX_NAME = 200;
/** A run's ID: random, and safe as a file name in the gate home. */
export const RUN_ID_PATTERN = /^run_[0-9a-f]{16}$/;
export const EVENT_TYPES = ["run_created", ...TRANSITION_EVENTS, "stop_raised", "stop_resolved"] as const;
/** The most stops one lift names (a person picks them; the CLI and the pages name one at a time). */
export const MAX_STOPS_PER_LIFT = 1000;
/** The run-file format this version writes; older formats are refused, never upgraded silently. */
export const RUN_FORMAT = "twinlock-run/2";

const schemasOf = lazySchemasOf("run-schema", () => {
  const promptId = z.string().check(z.regex(PROMPT_ID_PATTERN));
  const handoffHash = z.string().check(z.regex(HASH_PATTERN, "sha256:<64 hex digits>"));
  const isoTime = z.string().check(z.iso.datetime({ offset: true }));
  const name = z.string().check(z.minLength(1), z.maxLength(MAX_NAME));
  const runId = z.string().check(z.regex(RUN_ID_PATTERN, "run_ followed by 16 hex digits"));
  /** A gate home's identity. */
  const homeId = z.string().check(z.regex(/^home_[0-9a-f]{16}$/, "home_ followed by 16 hex digits"));
  const text = z.string().check(z.maxLength(MAX_TEXT));
  const stopReason = z.string().check(z.regex(/^[a-z0-9][a-z0-9-]{0,119}$/));
  const changeRef = z.string().check(z.regex(CHANGE_REF_PATTERN, "OWNER/REPO#NUMBER or OWNER/REPO@BRANCH"));
  /** An integer from 1: revisions and event numbers. */
  const ordinal = z.number().check(z.int(), z.gte(1));
  const count = z.number().check(z.int(), z.gte(0));
  const budget = z.nullable(count);
  /** An action or criterion ID in a list. */
  const listItem = z.string().check(z.maxLength(200));
  const actionList = z.union([z.literal("all"), z.array(listItem).check(z.maxLength(10_000))]);
  const passFail = z.enum(["passed", "failed"]);

  /** A detached Ed25519 signature over a receipt's canonical body (issue 5). */
  const Ed25519SignatureSchema = z.strictObject({
    public_key: z.string().check(z.maxLength(200)),
    signer: name,
    value: z.string().check(z.maxLength(200)),
  });
  /** A receipt's signature: Ed25519 from a key file, or a passkey's WebAuthn assertion. */
  const SignatureSchema = z.union([Ed25519SignatureSchema, WebAuthnSignatureSchema]);
  const signature = z.optional(SignatureSchema);

  /** What a run was created for: the consent binds these and admission checks requests against them. */
  const SettingsSchema = z.strictObject({
    mode: z.enum(MODES),
    environment: name,
    actions: actionList,
    budget,
  });

  /** SPEC §5 review receipt: feedback is recorded and is never approval. */
  const ReviewReceiptSchema = z.strictObject({
    kind: z.literal("review"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    reviewer: name,
    decision: z.enum(["changes_requested", "approved", "declined"]),
    feedback: z.nullable(text),
    /** Comments on items of the frozen revision (issue 27), inside the signed body; absent when none were given. */
    comments: z.optional(
      z
        .array(
          z.strictObject({
            item: z.string().check(z.minLength(1), z.maxLength(1200)),
            kind: z.enum(["evidence", "finding", "action", "criterion", "file"]),
            text: z.string().check(z.minLength(1), z.maxLength(4096)),
          }),
        )
        .check(z.maxLength(50)),
    ),
    handoff_hash: handoffHash,
    revision: ordinal,
    /** sha256 of the pinned suite's twinlock.yaml the decision was made under. */
    policy_digest: handoffHash,
    /** sha256 of the executor prompt's whole file (frontmatter and body) the reviewer's plan is for. */
    executor_digest: handoffHash,
    at: isoTime,
    signature,
  });

  /** SPEC §5 consent receipt: names the executor's ID and title and binds the run's limits. */
  const ConsentReceiptSchema = z.strictObject({
    kind: z.literal("consent"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    executor_title: name,
    user: name,
    decision: z.enum(["approved", "declined"]),
    handoff_hash: handoffHash,
    revision: ordinal,
    mode: z.enum(MODES),
    environment: name,
    actions: actionList,
    budget,
    expires_at: z.nullable(isoTime),
    policy_digest: handoffHash,
    executor_digest: handoffHash,
    at: isoTime,
    signature,
  });

  /** The separate apply approval of the APPLY_APPROVED path, bound to the hash and the consent. */
  const ApplyApprovalSchema = z.strictObject({
    kind: z.literal("apply_approval"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    approver: name,
    handoff_hash: handoffHash,
    revision: ordinal,
    consent_hash: handoffHash,
    at: isoTime,
    signature,
  });

  const AdmissionCheckSchema = z.strictObject({
    id: z.string().check(z.maxLength(40)),
    name: z.string().check(z.maxLength(200)),
    ok: z.boolean(),
    detail: z.string().check(z.maxLength(MAX_TEXT)),
  });

  /** What admission checked and found, recorded when it lets an executor start. */
  const AdmissionReceiptSchema = z.strictObject({
    kind: z.literal("admission"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    handoff_hash: handoffHash,
    revision: ordinal,
    consent_hash: handoffHash,
    requested: z.strictObject({ mode: z.enum(MODES), environment: name, actions: z.array(listItem), budget }),
    checks: z.array(AdmissionCheckSchema),
    actor: name,
    at: isoTime,
  });

  /** A freeze, signed on signing suites by a key with the `freeze` right: separation of duties compares this key. */
  const FreezeReceiptSchema = z.strictObject({
    kind: z.literal("freeze"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    by: name,
    handoff_hash: handoffHash,
    revision: ordinal,
    at: isoTime,
    signature,
  });

  /**
   * What a run file from before stops were numbered lacks: its lifts named a
   * reason, not the stops they lifted, so replay cannot tell which stops its
   * signer meant. Said instead of zod's "expected number" when the field is missing.
   */
  const unnumbered = (what: string) => (issue: { input: unknown }) =>
    issue.input === undefined
      ? `${what} is missing: the run was recorded by an earlier twinlock whose stop lifts did not name the stops they lifted, and this twinlock does not guess which ones a lift meant; finish it with the twinlock that made it, or start a new run with init-run`
      : undefined;

  /**
   * Lifting hard stops, signed on signing suites by a key with the `stop`
   * right. It names the exact stops it lifts (the sequence numbers of their
   * `stop_raised` events), all of `reason` (and on `workflow`, when not null):
   * a stop raised after the person decided is never lifted by it.
   */
  const StopResolutionSchema = z.strictObject({
    kind: z.literal("stop_resolution"),
    run_id: runId,
    reason: stopReason,
    workflow: z.nullable(promptId),
    stops: z
      .array(ordinal, { error: unnumbered("the lift's list of stops (stops)") })
      .check(z.minLength(1), z.maxLength(MAX_STOPS_PER_LIFT)),
    by: name,
    resolution: text,
    at: isoTime,
    signature,
  });

  /** A person's reading of a dry run's outcome, signed on signing suites by a key with the `apply` right. */
  const DryRunResultSchema = z.strictObject({
    kind: z.literal("dry_run_result"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    handoff_hash: handoffHash,
    revision: ordinal,
    result: passFail,
    note: text,
    by: name,
    at: isoTime,
    signature,
  });

  /**
   * A person's call that the executed change is the approved work: the close
   * as `verified`, bound to the change recorded with it (`execution_hash`, the
   * canonical hash of the close's execution record), signed on signing suites
   * by a key or passkey with the `verify` right. The agent never makes one.
   */
  const VerificationReceiptSchema = z.strictObject({
    kind: z.literal("verification"),
    run_id: runId,
    planner: promptId,
    executor: promptId,
    handoff_hash: handoffHash,
    revision: ordinal,
    result: z.literal("verified"),
    execution_hash: handoffHash,
    by: name,
    at: isoTime,
    signature,
  });

  /** A dry run of the consented plan: admitted by every check, in DRAFT_ONLY, consuming nothing; then its result. */
  const DryRunSchema = z.strictObject({
    handoff_hash: handoffHash,
    revision: ordinal,
    admitted_at: isoTime,
    admitted_by: name,
    result: z.nullable(passFail),
    note: z.nullable(text),
    result_at: z.nullable(isoTime),
    result_receipt: z.nullable(DryRunResultSchema),
  });

  const filePath = z.string().check(z.minLength(1), z.maxLength(4096));

  const FrozenHandoffSchema = z.strictObject({
    revision: ordinal,
    hash: handoffHash,
    dir: filePath,
    files: z.array(ManifestEntrySchema),
    frozen_at: isoTime,
    frozen_by: name,
    receipt: FreezeReceiptSchema,
    unchanged_because: z.nullable(text),
  });

  /**
   * What the executor did, recorded on `close` (issue 13): the changed files
   * with their digests, the verification results per acceptance criterion, and
   * the plan held against them as computed when it was recorded (replay cannot
   * read the frozen bytes, so it keeps this as recorded). Optional: runs closed
   * before it existed, or closed without it, replay as they always did.
   */
  const ExecutionSchema = z.strictObject({
    // `mode`: the git mode (file, executable, symlink, submodule pointer); absent when deleted, and in changes recorded before it.
    changed_files: z
      .array(
        z.strictObject({
          path: filePath,
          sha256: z.nullable(handoffHash),
          mode: z.optional(z.enum(["100644", "100755", "120000", "160000"])),
        }),
      )
      .check(z.maxLength(100_000)),
    criteria: z.array(z.strictObject({ id: name, result: passFail, command: text })).check(z.maxLength(10_000)),
    /**
     * The commit the change was judged at (`--git-range`'s right side, or a
     * clean checkout's HEAD), so the check run's success names that commit
     * and no later head; absent outside git, and in changes recorded before it.
     * Part of what the verification receipt's `execution_hash` signs.
     */
    commit: z.optional(z.string().check(z.regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/))),
    conformance: z.strictObject({
      actions_not_done: z.array(listItem),
      files_outside_plan: z.array(z.string().check(z.maxLength(4096))),
      criteria_without_evidence: z.array(listItem),
      criteria_failed: z.array(listItem),
    }),
  });

  /** One pair's workflow as replay derives it. Receipts are kept whole; validity is judged against the current hash. */
  const WorkflowSchema = z.strictObject({
    planner: promptId,
    executor: promptId,
    executor_title: name,
    pair_digest: handoffHash,
    state: z.enum(STATES),
    revision: count,
    handoff: z.nullable(FrozenHandoffSchema),
    history: z.array(
      z.strictObject({ revision: z.number().check(z.int()), hash: handoffHash, frozen_at: isoTime, seq: z.number().check(z.int()) }),
    ),
    reviews: z.array(ReviewReceiptSchema),
    consents: z.array(z.extend(ConsentReceiptSchema, { consumed_at: z.nullable(isoTime) })),
    apply_approvals: z.array(ApplyApprovalSchema),
    admissions: z.array(AdmissionReceiptSchema),
    dry_runs: z.array(DryRunSchema),
    result: z.nullable(
      z.strictObject({
        outcome: z.enum(["verified", "failed", "rolled_back", "declined", "abandoned"]),
        residual: z.nullable(text),
        at: isoTime,
        by: name,
        /** Present only when `close` recorded the executed change. */
        execution: z.optional(ExecutionSchema),
        /** A verified close's receipt: the person's call (absent on runs verified before it existed). */
        receipt: z.optional(VerificationReceiptSchema),
        /** True when the agent reported this ending (MCP, the agent API): its report, not a person's close. */
        report: z.optional(z.literal(true)),
      }),
    ),
  });

  const StopSchema = z.strictObject({
    /** The sequence number of the `stop_raised` event: how a lift names this stop. */
    seq: z.number({ error: unnumbered("the stop's number (seq)") }).check(z.int(), z.gte(1)),
    reason: stopReason,
    workflow: z.nullable(promptId),
    raised_at: isoTime,
    raised_by: name,
    note: z.nullable(text),
    resolved_at: z.nullable(isoTime),
    resolved_by: z.nullable(name),
    resolution: z.nullable(text),
    /** The signed receipt that lifted the stop; admission re-judges it under the pinned policy. */
    resolution_receipt: z.nullable(StopResolutionSchema),
  });

  /** The run's whole state, derived by replaying its events. */
  const RunStateSchema = z.strictObject({
    run_id: runId,
    home_id: homeId,
    created_at: isoTime,
    suite: z.strictObject({ root: filePath, suite_id: name }),
    settings: SettingsSchema,
    /** The change the run is for; absent from runs made without `--for-change`. */
    change: z.optional(changeRef),
    workflows: z.record(promptId, WorkflowSchema),
    authorized_execution_prompt_ids: z.array(promptId),
    stops: z.array(StopSchema),
  });

  /** A gate's Ed25519 signature over one of its statements (src/trust/gate-statement.ts says what is signed). */
  const GateSignatureSchema = z.strictObject({
    gate_key: z.string().check(z.maxLength(200)),
    value: z.string().check(z.maxLength(200)),
  });

  /** SPEC §5 event: `prev` is the hash of the previous event, so the log is a hash chain. */
  const EventSchema = z.strictObject({
    seq: ordinal,
    at: isoTime,
    actor: name,
    type: z.enum(EVENT_TYPES),
    data: z.record(z.string(), z.unknown()),
    prev: handoffHash,
    /** On the records the gate itself makes (admission, close…): its signature over the event without this field. */
    gate: z.optional(GateSignatureSchema),
  });

  /** The gate's signature of a run's head: as recorded at its checkpoint, or as exported. */
  const HeadSignatureSchema = z.strictObject({
    kind: z.enum(["checkpoint", "export"]),
    gate_key: z.string().check(z.maxLength(200)),
    value: z.string().check(z.maxLength(200)),
  });

  /** The run file on disk. `revision` counts events and is the compare-and-swap token; `head` hashes the last event. */
  const RunFileSchema = z.strictObject({
    format: z.literal(RUN_FORMAT),
    revision: ordinal,
    head: handoffHash,
    state: RunStateSchema,
    events: z.array(EventSchema).check(z.minLength(1)),
    /** The gate's signature of `head`; absent from runs written before gates signed. */
    gate_signature: z.optional(HeadSignatureSchema),
  });
  return {
    promptId,
    handoffHash,
    runId,
    homeId,
    stopReason,
    changeRef,
    SignatureSchema,
    SettingsSchema,
    ReviewReceiptSchema,
    ConsentReceiptSchema,
    ApplyApprovalSchema,
    AdmissionCheckSchema,
    AdmissionReceiptSchema,
    FreezeReceiptSchema,
    StopResolutionSchema,
    DryRunResultSchema,
    VerificationReceiptSchema,
    DryRunSchema,
    FrozenHandoffSchema,
    ExecutionSchema,
    WorkflowSchema,
    StopSchema,
    RunStateSchema,
    EventSchema,
    GateSignatureSchema,
    HeadSignatureSchema,
    RunFileSchema,
  };
});

export const promptId = schemasOf("promptId");
export const handoffHash = schemasOf("handoffHash");
export const runId = schemasOf("runId");
export const homeId = schemasOf("homeId");
export const stopReason = schemasOf("stopReason");
export const changeRef = schemasOf("changeRef");
export const SignatureSchema = schemasOf("SignatureSchema");
export const SettingsSchema = schemasOf("SettingsSchema");
export const ReviewReceiptSchema = schemasOf("ReviewReceiptSchema");
export const ConsentReceiptSchema = schemasOf("ConsentReceiptSchema");
export const ApplyApprovalSchema = schemasOf("ApplyApprovalSchema");
export const AdmissionCheckSchema = schemasOf("AdmissionCheckSchema");
export const AdmissionReceiptSchema = schemasOf("AdmissionReceiptSchema");
export const FreezeReceiptSchema = schemasOf("FreezeReceiptSchema");
export const StopResolutionSchema = schemasOf("StopResolutionSchema");
export const DryRunResultSchema = schemasOf("DryRunResultSchema");
export const VerificationReceiptSchema = schemasOf("VerificationReceiptSchema");
export const DryRunSchema = schemasOf("DryRunSchema");
export const FrozenHandoffSchema = schemasOf("FrozenHandoffSchema");
export const ExecutionSchema = schemasOf("ExecutionSchema");
export const WorkflowSchema = schemasOf("WorkflowSchema");
export const StopSchema = schemasOf("StopSchema");
export const RunStateSchema = schemasOf("RunStateSchema");
export const EventSchema = schemasOf("EventSchema");
export const GateSignatureSchema = schemasOf("GateSignatureSchema");
export const HeadSignatureSchema = schemasOf("HeadSignatureSchema");
export const RunFileSchema = schemasOf("RunFileSchema");

export type DryRunResult = z.infer<typeof DryRunResultSchema>;
export type VerificationReceipt = z.infer<typeof VerificationReceiptSchema>;
export type Settings = z.infer<typeof SettingsSchema>;
export type FreezeReceipt = z.infer<typeof FreezeReceiptSchema>;
export type StopResolution = z.infer<typeof StopResolutionSchema>;
export type ReviewReceipt = z.infer<typeof ReviewReceiptSchema>;
export type ConsentReceipt = z.infer<typeof ConsentReceiptSchema>;
export type ApplyApproval = z.infer<typeof ApplyApprovalSchema>;
export type AdmissionReceipt = z.infer<typeof AdmissionReceiptSchema>;
export type AdmissionCheck = z.infer<typeof AdmissionCheckSchema>;
export type Execution = z.infer<typeof ExecutionSchema>;
export type EventType = (typeof EVENT_TYPES)[number];
export type Workflow = z.infer<typeof WorkflowSchema>;
export type Stop = z.infer<typeof StopSchema>;
export type RunState = z.infer<typeof RunStateSchema>;
export type RunEvent = z.infer<typeof EventSchema>;
export type RunFile = z.infer<typeof RunFileSchema>;
