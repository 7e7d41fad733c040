import "../schemas/zod-setup.js";
import { z } from "zod/mini";
import { hashCanonical } from "../crypto/canonical-hash.js";
import { IntegrityError } from "../errors/errors.js";
import { manifestHash } from "../handoff/hash-handoff.js";
import { ManifestEntrySchema } from "../handoff/manifest-schema.js";
import { lazySchemasOf } from "../schemas/lazy-schema.js";
import { receiptHash } from "./receipt-hash.js";
import {
  AdmissionReceiptSchema,
  ApplyApprovalSchema,
  ConsentReceiptSchema,
  changeRef,
  DryRunResultSchema,
  ExecutionSchema,
  FreezeReceiptSchema,
  handoffHash,
  homeId,
  promptId,
  ReviewReceiptSchema,
  type RunEvent,
  type RunState,
  runId,
  SettingsSchema,
  StopResolutionSchema,
  stopReason,
  VerificationReceiptSchema,
  type Workflow,
} from "./run-schema.js";
import { findTransition, type Transition, type TransitionEvent } from "./transition-table.js";

const eventDataOf = lazySchemasOf("apply-event", () => {
  const text = z.string().check(z.maxLength(64 * 1024));
  const ordinal = z.number().check(z.int(), z.gte(1));
  const name = z.string().check(z.minLength(1), z.maxLength(200));
  const filePath = z.string().check(z.minLength(1), z.maxLength(4096));
  /** The data of an event that records one of a pair's receipts. */
  const withReceipt = <R extends z.ZodMiniType>(receipt: R) => z.strictObject({ planner: promptId, receipt });
  return {
    run_created: z.strictObject({
      run_id: runId,
      home_id: homeId,
      suite: z.strictObject({ root: filePath, suite_id: name }),
      settings: SettingsSchema,
      change: z.optional(changeRef),
      workflows: z
        .array(z.strictObject({ planner: promptId, executor: promptId, executor_title: name, pair_digest: handoffHash }))
        .check(z.minLength(1)),
    }),
    handoff_frozen: z.strictObject({
      planner: promptId,
      revision: ordinal,
      hash: handoffHash,
      dir: filePath,
      files: z.array(ManifestEntrySchema),
      receipt: FreezeReceiptSchema,
      unchanged_because: z.nullable(text),
    }),
    review_requested: z.strictObject({ planner: promptId, revision: ordinal, hash: handoffHash }),
    changes_requested: withReceipt(ReviewReceiptSchema),
    approval_recorded: withReceipt(ReviewReceiptSchema),
    plan_approved: withReceipt(ReviewReceiptSchema),
    plan_declined: withReceipt(ReviewReceiptSchema),
    consent_granted: withReceipt(ConsentReceiptSchema),
    consent_declined: withReceipt(ConsentReceiptSchema),
    apply_approved: withReceipt(ApplyApprovalSchema),
    admitted: withReceipt(AdmissionReceiptSchema),
    dry_run_admitted: withReceipt(AdmissionReceiptSchema),
    dry_run_result: withReceipt(DryRunResultSchema),
    closed: z.strictObject({
      planner: promptId,
      outcome: z.enum(["verified", "failed", "rolled_back", "abandoned"]),
      residual: z.nullable(text),
      execution: z.optional(ExecutionSchema),
      /** A verified close's receipt (required on a verified close recorded since it existed, see replay). */
      receipt: z.optional(VerificationReceiptSchema),
      /** The agent's report of how its work ended, never a verified close. */
      report: z.optional(z.literal(true)),
    }),
    failed: z.strictObject({ planner: promptId, residual: text }),
    stop_raised: z.strictObject({
      reason: stopReason,
      workflow: z.nullable(promptId),
      note: z.nullable(text),
      /** The gate-home stop request it was written from (`stop-requests.ts`), so no request is written twice or taken for another. */
      request: z.optional(z.string().check(z.regex(/^(?:\d{20}|\d{13})-[0-9a-f]{16}$/))),
    }),
    stop_resolved: z.strictObject({ receipt: StopResolutionSchema }),
  };
});

/** The data each event type carries; replay refuses anything else. */
export const EVENT_DATA = {
  run_created: eventDataOf("run_created"),
  handoff_frozen: eventDataOf("handoff_frozen"),
  review_requested: eventDataOf("review_requested"),
  changes_requested: eventDataOf("changes_requested"),
  approval_recorded: eventDataOf("approval_recorded"),
  plan_approved: eventDataOf("plan_approved"),
  plan_declined: eventDataOf("plan_declined"),
  consent_granted: eventDataOf("consent_granted"),
  consent_declined: eventDataOf("consent_declined"),
  apply_approved: eventDataOf("apply_approved"),
  admitted: eventDataOf("admitted"),
  dry_run_admitted: eventDataOf("dry_run_admitted"),
  dry_run_result: eventDataOf("dry_run_result"),
  closed: eventDataOf("closed"),
  failed: eventDataOf("failed"),
  stop_raised: eventDataOf("stop_raised"),
  stop_resolved: eventDataOf("stop_resolved"),
} as const;

/**
 * The stop raised by event `seq`, or undefined. Stops are recorded in event
 * order, so their numbers ascend and a binary search finds one: a lift costs
 * the log of the stops, not their count, however many the agent raised.
 */
export function stopBySeq(stops: RunState["stops"], seq: number): RunState["stops"][number] | undefined {
  let lo = 0;
  let hi = stops.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const s = stops[mid] as RunState["stops"][number];
    if (s.seq === seq) return s;
    if (s.seq < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/**
 * Apply one event to the run state (pure; returns a new state and leaves the
 * given one as it was). Replay runs every event through here, so a log that
 * was edited by hand, even with its chain rebuilt, cannot describe a move the
 * transition table forbids or a receipt bound to another hash, revision, pair
 * or run. It copies the whole state, so a loop over many events calls
 * `applyEventOwned` on a state it copied once instead.
 */
export function applyEvent(state: RunState | undefined, event: RunEvent): RunState {
  return applyTo(state, event, true);
}

/**
 * Apply one event to a state the caller owns, changing it in place (and
 * returning it, or the new state for `run_created`): nothing else may hold it.
 * The refusals are applyEvent's; after one the state is half changed, so the
 * caller throws it away. Replaying N events this way costs time linear in N,
 * where copying the state for every event would cost N² once it grows with
 * the events (stops, receipts, revisions).
 */
export function applyEventOwned(state: RunState | undefined, event: RunEvent): RunState {
  return applyTo(state, event, false);
}

function applyTo(state: RunState | undefined, event: RunEvent, copy: boolean): RunState {
  const bad = (reason: string): never => {
    throw new IntegrityError(`event ${event.seq} (${event.type}) is invalid: ${reason}`, { seq: event.seq });
  };
  const schema = EVENT_DATA[event.type];
  const parsed = schema.safeParse(event.data);
  if (!parsed.success)
    bad(`its data does not match the ${event.type} schema (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message})`);
  // The data as parsed once, typed as the schema of the branch that reads it.
  const dataOf = <S extends z.ZodMiniType>(_schema: S): z.infer<S> => parsed.data as z.infer<S>;

  if (event.type === "run_created") {
    if (state !== undefined || event.seq !== 1) bad("run_created must be the first event and only the first");
    const d = dataOf(EVENT_DATA.run_created);
    const workflows: Record<string, Workflow> = {};
    for (const w of d.workflows) {
      if (workflows[w.planner]) bad(`planner ${w.planner} is listed twice`);
      workflows[w.planner] = {
        ...w,
        state: "investigating",
        revision: 0,
        handoff: null,
        history: [],
        reviews: [],
        consents: [],
        apply_approvals: [],
        admissions: [],
        dry_runs: [],
        result: null,
      };
    }
    return {
      run_id: d.run_id,
      home_id: d.home_id,
      created_at: event.at,
      suite: d.suite,
      settings: d.settings,
      ...(d.change === undefined ? {} : { change: d.change }),
      workflows,
      authorized_execution_prompt_ids: [],
      stops: [],
    };
  }
  if (state === undefined) return bad("the first event must be run_created");
  const next: RunState = copy ? structuredClone(state) : state;

  if (event.type === "stop_raised") {
    const d = dataOf(EVENT_DATA.stop_raised);
    if (d.workflow !== null && !next.workflows[d.workflow]) bad(`stop names workflow ${d.workflow}, which is not in this run`);
    next.stops.push({
      seq: event.seq,
      reason: d.reason,
      workflow: d.workflow,
      raised_at: event.at,
      raised_by: event.actor,
      note: d.note,
      resolved_at: null,
      resolved_by: null,
      resolution: null,
      resolution_receipt: null,
    });
    return next;
  }
  if (event.type === "stop_resolved") {
    const d = dataOf(EVENT_DATA.stop_resolved).receipt;
    // Named in ascending order, so admission can find a stop in a receipt by binary search.
    if (d.run_id !== next.run_id) bad(`stop resolution is for run ${d.run_id}, not ${next.run_id}`);
    // Exactly the stops the receipt names: never every stop of its reason, so a stop raised after the
    // person decided (or one she was not shown) stays standing.
    let previous = 0;
    for (const seq of d.stops) {
      if (seq <= previous) bad(`its stops are not in ascending order without repeats (${previous}, then ${seq})`);
      previous = seq;
      const s = stopBySeq(next.stops, seq) ?? bad(`it lifts stop ${seq}, but event ${seq} is not a raised stop`);
      if (s.resolved_at !== null) bad(`it lifts stop ${seq} (!STOP:${s.reason}), which was already lifted at ${s.resolved_at}`);
      if (s.reason !== d.reason) bad(`it lifts stop ${seq} as !STOP:${d.reason}, but stop ${seq} is !STOP:${s.reason}`);
      if (d.workflow !== null && s.workflow !== d.workflow)
        bad(`it lifts stop ${seq} on ${d.workflow}, but stop ${seq} is on ${s.workflow ?? "the whole run"}`);
      s.resolved_at = event.at;
      s.resolved_by = d.by;
      s.resolution = d.resolution;
      s.resolution_receipt = d;
    }
    return next;
  }

  const planner = (event.data as { planner: string }).planner;
  const wf = next.workflows[planner] ?? bad(`planner ${planner} is not in this run`);
  const move = (when?: Transition["when"]) => {
    const t = findTransition(wf.state, event.type as TransitionEvent, when);
    if (!t) bad(`${event.type} is not legal from state ${wf.state}`);
    wf.state = (t as Transition).to;
  };
  const deauthorize = () => {
    next.authorized_execution_prompt_ids = next.authorized_execution_prompt_ids.filter((id) => id !== wf.executor);
  };
  const checkBinding = (r: { run_id: string; planner: string; executor: string; handoff_hash: string; revision: number }) => {
    if (r.run_id !== next.run_id) bad(`receipt is for run ${r.run_id}, not ${next.run_id}`);
    if (r.planner !== wf.planner || r.executor !== wf.executor)
      bad(`receipt is for ${r.planner}→${r.executor}, not ${wf.planner}→${wf.executor}`);
    if (!wf.handoff || r.handoff_hash !== wf.handoff.hash || r.revision !== wf.handoff.revision)
      bad(
        `receipt is for ${r.handoff_hash} revision ${r.revision}, but the frozen handoff is ${wf.handoff?.hash ?? "none"} revision ${wf.handoff?.revision ?? 0}`,
      );
  };
  const currentConsent = () => {
    const c = wf.consents[wf.consents.length - 1];
    return c && c.decision === "approved" && wf.handoff && c.handoff_hash === wf.handoff.hash && c.revision === wf.handoff.revision
      ? c
      : undefined;
  };

  switch (event.type) {
    case "handoff_frozen": {
      const d = dataOf(EVENT_DATA.handoff_frozen);
      if (d.revision !== wf.revision + 1) bad(`revision ${d.revision} does not follow ${wf.revision}`);
      if (manifestHash(d.files) !== d.hash) bad(`its file list hashes to ${manifestHash(d.files)}, not the recorded ${d.hash}`);
      const r = d.receipt;
      if (
        r.run_id !== next.run_id ||
        r.planner !== wf.planner ||
        r.executor !== wf.executor ||
        r.handoff_hash !== d.hash ||
        r.revision !== d.revision
      )
        bad(`its freeze receipt is for ${r.run_id} ${r.planner}→${r.executor} ${r.handoff_hash} revision ${r.revision}, not this freeze`);
      move();
      wf.revision = d.revision;
      wf.handoff = {
        revision: d.revision,
        hash: d.hash,
        dir: d.dir,
        files: d.files,
        frozen_at: event.at,
        frozen_by: r.by,
        receipt: r,
        unchanged_because: d.unchanged_because,
      };
      wf.history.push({ revision: d.revision, hash: d.hash, frozen_at: event.at, seq: event.seq });
      deauthorize();
      break;
    }
    case "review_requested": {
      const d = dataOf(EVENT_DATA.review_requested);
      if (!wf.handoff || d.hash !== wf.handoff.hash || d.revision !== wf.handoff.revision)
        bad("review requested for a hash or revision that is not the frozen one");
      move();
      break;
    }
    case "changes_requested":
    case "approval_recorded":
    case "plan_approved":
    case "plan_declined": {
      const { receipt } = dataOf(EVENT_DATA[event.type]);
      const expected = {
        changes_requested: "changes_requested",
        approval_recorded: "approved",
        plan_approved: "approved",
        plan_declined: "declined",
      }[event.type];
      if (receipt.decision !== expected) bad(`receipt decision ${receipt.decision} does not match ${event.type}`);
      checkBinding(receipt);
      move();
      wf.reviews.push(receipt);
      if (event.type === "plan_declined") wf.result = { outcome: "declined", residual: receipt.feedback, at: event.at, by: event.actor };
      break;
    }
    case "consent_granted":
    case "consent_declined": {
      const { receipt } = dataOf(EVENT_DATA[event.type]);
      if (receipt.decision !== (event.type === "consent_granted" ? "approved" : "declined"))
        bad(`receipt decision ${receipt.decision} does not match ${event.type}`);
      checkBinding(receipt);
      if (receipt.executor_title !== wf.executor_title)
        bad(`consent names title "${receipt.executor_title}", not the executor's "${wf.executor_title}"`);
      const approved = wf.reviews[wf.reviews.length - 1];
      if (approved?.decision !== "approved" || approved.handoff_hash !== receipt.handoff_hash)
        bad("consent without an approved review of the same hash");
      move(event.type === "consent_granted" ? (receipt.mode === "APPLY_APPROVED" ? "apply_approved_path" : "dry_run_path") : undefined);
      wf.consents.push({ ...receipt, consumed_at: null });
      if (event.type === "consent_granted") {
        if (!next.authorized_execution_prompt_ids.includes(wf.executor)) next.authorized_execution_prompt_ids.push(wf.executor);
      } else {
        wf.result = { outcome: "declined", residual: "execution consent declined", at: event.at, by: event.actor };
        deauthorize();
      }
      break;
    }
    case "apply_approved": {
      const { receipt } = dataOf(EVENT_DATA.apply_approved);
      checkBinding(receipt);
      const consent = currentConsent();
      if (!consent || receiptHash(consent) !== receipt.consent_hash) bad("apply approval is not bound to the current consent");
      move();
      wf.apply_approvals.push(receipt);
      break;
    }
    case "admitted": {
      const { receipt } = dataOf(EVENT_DATA.admitted);
      checkBinding(receipt);
      const consent = currentConsent();
      if (!consent || consent.consumed_at !== null || receiptHash(consent) !== receipt.consent_hash)
        bad("admission is not bound to the current, unused consent");
      if (!receipt.checks.every((c) => c.ok)) bad("admission recorded with a failed check");
      move();
      (consent as { consumed_at: string | null }).consumed_at = event.at;
      wf.admissions.push(receipt);
      break;
    }
    case "dry_run_admitted": {
      const { receipt } = dataOf(EVENT_DATA.dry_run_admitted);
      checkBinding(receipt);
      if (!currentConsent()) bad("a dry run needs the current, granted consent");
      if (!receipt.checks.every((c) => c.ok)) bad("dry run recorded with a failed check");
      if (receipt.requested.mode !== "DRAFT_ONLY") bad(`a dry run is admitted in DRAFT_ONLY, not ${receipt.requested.mode}`);
      move();
      wf.dry_runs.push({
        handoff_hash: receipt.handoff_hash,
        revision: receipt.revision,
        admitted_at: event.at,
        admitted_by: event.actor,
        result: null,
        note: null,
        result_at: null,
        result_receipt: null,
      });
      break;
    }
    case "dry_run_result": {
      const d = dataOf(EVENT_DATA.dry_run_result).receipt;
      const last = wf.dry_runs[wf.dry_runs.length - 1];
      if (!last || last.result !== null || last.handoff_hash !== d.handoff_hash || last.revision !== d.revision)
        bad("a dry-run result needs an open dry run of the same hash and revision");
      checkBinding(d);
      move();
      Object.assign(last as object, { result: d.result, note: d.note, result_at: event.at, result_receipt: d });
      break;
    }
    case "closed": {
      const d = dataOf(EVENT_DATA.closed);
      const fromExecuting = wf.state === "executing";
      if (fromExecuting === (d.outcome === "abandoned"))
        bad(
          fromExecuting
            ? "an executing workflow closes as verified, failed or rolled_back"
            : `only an executing workflow can close as ${d.outcome}`,
        );
      if (!fromExecuting && !d.residual) bad("closing before execution needs a residual record");
      if (!fromExecuting && d.execution) bad("only an executing workflow records an executed change");
      if (d.receipt) {
        if (d.outcome !== "verified") bad(`a ${d.outcome} close carries no verification receipt`);
        checkBinding(d.receipt);
        if (!d.execution || d.receipt.execution_hash !== hashCanonical(d.execution))
          bad("the verification receipt is for another executed change than the one recorded with the close");
      }
      if (d.report && d.outcome === "verified") bad("the agent's report is never a verified close: verifying the work is a person's call");
      move();
      wf.result = {
        outcome: d.outcome,
        residual: d.residual,
        at: event.at,
        by: event.actor,
        ...(d.execution ? { execution: d.execution } : {}),
        ...(d.receipt ? { receipt: d.receipt } : {}),
        ...(d.report ? { report: true as const } : {}),
      };
      deauthorize();
      break;
    }
    case "failed": {
      const d = dataOf(EVENT_DATA.failed);
      move();
      wf.result = { outcome: "failed", residual: d.residual, at: event.at, by: event.actor };
      deauthorize();
      break;
    }
  }
  return next;
}

/** Rebuild a run's state from its events alone. */
export function replayEvents(events: readonly RunEvent[]): RunState {
  let state: RunState | undefined;
  // The state is replay's own from run_created on, so no event copies it.
  for (const e of events) state = applyEventOwned(state, e);
  if (!state) throw new IntegrityError("the run has no events");
  return state;
}
