import type { Right } from "../suite/suite-config.js";
import {
  AdmissionReceiptSchema,
  ApplyApprovalSchema,
  ConsentReceiptSchema,
  DryRunResultSchema,
  type EventType,
  FreezeReceiptSchema,
  ReviewReceiptSchema,
  type RunState,
  StopResolutionSchema,
} from "./run-schema.js";

/**
 * Every receipt kind a run records, in the order the consumers list them
 * (verify-receipts, CI, attestations, the pages, MCP). Adding a kind is a row
 * in `RECEIPT_KINDS` plus its schema in run-schema.ts and its event in
 * apply-event.ts; every consumer keys its handling by this union, so `tsc`
 * and src/run/receipt-kinds.test.ts fail until each says what it does with it.
 */
export const RECEIPT_KIND_NAMES = [
  "freeze",
  "review",
  "consent",
  "apply_approval",
  "dry_run_result",
  "admission",
  "stop_resolution",
] as const;

/** A receipt kind: the `kind` field of a receipt. */
export type ReceiptKind = (typeof RECEIPT_KIND_NAMES)[number];

/** A receipt's signature field as the run schema holds it: Ed25519 (no `kind`), or a passkey's WebAuthn assertion. */
export interface HeldSignature {
  kind?: "webauthn";
  public_key: string;
  signer: string;
  value: string;
  credential_id?: string;
  authenticator_data?: string;
  client_data_json?: string;
}

/** A receipt as the consumers handle it: its kind, the fields of its schema, maybe a signature. */
export type AnyReceipt = { kind: string; at: string; signature?: HeldSignature } & Record<string, unknown>;

/** One receipt replay keeps, with the workflow it belongs to (null: the whole run). */
export interface HeldReceipt {
  planner: string | null;
  receipt: AnyReceipt;
}

/** What the library knows about one receipt kind. */
export interface ReceiptKindRow {
  kind: ReceiptKind;
  /** The receipt's schema (run-schema.ts): replay, attestations and the published schemas parse with it. */
  schema: { safeParse(input: unknown): { success: boolean } };
  /**
   * The right a signer's key must hold (SPEC §9 "Every human decision is
   * signed"); null for the gate's own record, which no person signs: the
   * gate's key signs the event that holds it (SPEC §12), and the chain vouches for it.
   */
  right: Right | null;
  /** The receipt field naming who decided (on the gate's own record: the actor it admitted for). */
  signer: "reviewer" | "user" | "approver" | "by" | "actor";
  /** The events that record it, each with the receipt in `data.receipt`. */
  events: readonly EventType[];
  /** Where replay keeps it, in words (docs/architecture.md repeats these). */
  lives: string;
  /** Every receipt of this kind replay keeps, oldest first, as recorded (a consent without the home's `consumed_at`). */
  held: (state: RunState) => HeldReceipt[];
}

const perWorkflow =
  (pick: (wf: RunState["workflows"][string]) => readonly object[]) =>
  (state: RunState): HeldReceipt[] =>
    Object.values(state.workflows).flatMap((wf) => pick(wf).map((receipt) => ({ planner: wf.planner, receipt: receipt as AnyReceipt })));

/** The receipt kinds, one row each: schema, right, signer field, events and where replay keeps them. */
export const RECEIPT_KINDS = {
  freeze: {
    kind: "freeze",
    schema: FreezeReceiptSchema,
    right: "freeze",
    signer: "by",
    events: ["handoff_frozen"],
    lives: "workflow.handoff.receipt (the current revision's; earlier ones only in their handoff_frozen events)",
    held: perWorkflow((wf) => (wf.handoff ? [wf.handoff.receipt] : [])),
  },
  review: {
    kind: "review",
    schema: ReviewReceiptSchema,
    right: "review",
    signer: "reviewer",
    events: ["changes_requested", "approval_recorded", "plan_approved", "plan_declined"],
    lives: "workflow.reviews[]",
    held: perWorkflow((wf) => wf.reviews),
  },
  consent: {
    kind: "consent",
    schema: ConsentReceiptSchema,
    right: "consent",
    signer: "user",
    events: ["consent_granted", "consent_declined"],
    lives: "workflow.consents[] (with the home's consumed_at beside each)",
    held: perWorkflow((wf) => wf.consents.map(({ consumed_at: _consumed, ...c }) => c)),
  },
  apply_approval: {
    kind: "apply_approval",
    schema: ApplyApprovalSchema,
    right: "apply",
    signer: "approver",
    events: ["apply_approved"],
    lives: "workflow.apply_approvals[]",
    held: perWorkflow((wf) => wf.apply_approvals),
  },
  dry_run_result: {
    kind: "dry_run_result",
    schema: DryRunResultSchema,
    right: "apply",
    signer: "by",
    events: ["dry_run_result"],
    lives: "workflow.dry_runs[].result_receipt",
    held: perWorkflow((wf) => wf.dry_runs.flatMap((d) => (d.result_receipt ? [d.result_receipt] : []))),
  },
  admission: {
    kind: "admission",
    schema: AdmissionReceiptSchema,
    right: null,
    signer: "actor",
    events: ["admitted", "dry_run_admitted"],
    lives: "workflow.admissions[] (a dry run's admission only in its dry_run_admitted event and workflow.dry_runs[])",
    held: perWorkflow((wf) => wf.admissions),
  },
  stop_resolution: {
    kind: "stop_resolution",
    schema: StopResolutionSchema,
    right: "stop",
    signer: "by",
    events: ["stop_resolved"],
    lives: "state.stops[].resolution_receipt (on the run, or on one workflow when the stop names it)",
    held: (state) =>
      state.stops.flatMap((s) => (s.resolution_receipt ? [{ planner: s.workflow, receipt: s.resolution_receipt as AnyReceipt }] : [])),
  },
} as const satisfies { readonly [K in ReceiptKind]: ReceiptKindRow & { kind: K } };

/** The rows in table order, each as a plain `ReceiptKindRow`. */
export const RECEIPT_ROWS: readonly ReceiptKindRow[] = RECEIPT_KIND_NAMES.map((kind) => RECEIPT_KINDS[kind]);

/** The row of a receipt's kind, or undefined for a kind no row names (a receipt from elsewhere, not yet parsed). */
export function receiptKindOf(kind: string): ReceiptKindRow | undefined {
  return RECEIPT_ROWS.find((row) => row.kind === kind);
}

/** Every receipt replay keeps, kind by kind in table order, oldest first within a kind. */
export function heldReceipts(state: RunState): Array<HeldReceipt & { row: ReceiptKindRow }> {
  return RECEIPT_ROWS.flatMap((row) => row.held(state).map((h) => ({ ...h, row })));
}
