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
  VerificationReceiptSchema,
  type Workflow,
} from "./run-schema.js";

/**
 * Every receipt kind a run records, in the order the consumers list them
 * (verify-receipts, CI, attestations, the pages, MCP). Adding a kind is a row
 * in `RECEIPT_KINDS` plus its schema in run-schema.ts and its event in
 * apply-event.ts: the row says how every consumer handles it (trust,
 * admission, CI, attestations, the pages, MCP, the published schemas), so no
 * consumer keeps a list of its own (src/receipt-kind-consumers.test.ts holds
 * them to it), and `tsc` fails until the row says each.
 */
export const RECEIPT_KIND_NAMES = [
  "freeze",
  "review",
  "consent",
  "apply_approval",
  "dry_run_result",
  "admission",
  "stop_resolution",
  "verification",
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
  /**
   * Where verify-receipts (and import) finds it to judge: `chain`, every one
   * the workflow's events recorded (a re-freeze replaces the state's freeze);
   * `workflow`, the ones replay keeps on each workflow; `run`, the ones
   * replay keeps on the run, judged after the workflows; null, not a
   * person's decision (the chain's gate signature vouches for it).
   */
  judged: "chain" | "workflow" | "run" | null;
  /** The ones of a workflow's current revision admission relies on and re-judges under T1–T5; null where another check judges the kind. */
  relied: ((wf: Workflow, revision: number) => readonly object[]) | null;
  /** Whether CI (`verify`) judges it as one of a workflow's signed decisions, against `right`; false where CI judges it another way. */
  ciJudged: boolean;
  /** Its in-toto attestation predicate type (`attest`, `verify-attestation`), or null for a kind not attested. */
  attestation: string | null;
  /** How the pages' receipts timeline words it: who, the decision and a note. */
  shown: (receipt: AnyReceipt) => { who: string; decision: string | null; note: string | null };
  /** The field of MCP's receipts resource it is listed under, and whether that is a list or the current one. */
  mcp: { field: string; many: boolean };
  /** The file under `schemas/` its schema is published as, or null for a kind published only inside run-file.schema.json. */
  published: string | null;
}

const text = (v: unknown): string | null => (typeof v === "string" ? v : null);

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
    judged: "chain",
    relied: (wf) => (wf.handoff ? [wf.handoff.receipt] : []),
    // The planner agent's act, not a person's decision: CI and attestations leave it to the chain's gate signature.
    ciJudged: false,
    attestation: null,
    shown: (r) => ({ who: String(r.by), decision: "frozen", note: null }),
    mcp: { field: "freeze", many: false },
    published: null,
  },
  review: {
    kind: "review",
    schema: ReviewReceiptSchema,
    right: "review",
    signer: "reviewer",
    events: ["changes_requested", "approval_recorded", "plan_approved", "plan_declined"],
    lives: "workflow.reviews[]",
    held: perWorkflow((wf) => wf.reviews),
    judged: "workflow",
    relied: (wf, rev) => wf.reviews.filter((r) => r.revision === rev && r.decision === "approved"),
    ciJudged: true,
    attestation: "https://twinlock.dev/review/v1",
    shown: (r) => ({ who: String(r.reviewer), decision: text(r.decision), note: reviewNote(r) }),
    mcp: { field: "reviews", many: true },
    published: "review-receipt.schema.json",
  },
  consent: {
    kind: "consent",
    schema: ConsentReceiptSchema,
    right: "consent",
    signer: "user",
    events: ["consent_granted", "consent_declined"],
    lives: "workflow.consents[] (with the home's consumed_at beside each)",
    held: perWorkflow((wf) => wf.consents.map(({ consumed_at: _consumed, ...c }) => c)),
    judged: "workflow",
    relied: (wf) => wf.consents.slice(-1),
    ciJudged: true,
    attestation: "https://twinlock.dev/consent/v1",
    shown: (r) => ({ who: String(r.user), decision: text(r.decision), note: null }),
    mcp: { field: "consents", many: true },
    published: "consent-receipt.schema.json",
  },
  apply_approval: {
    kind: "apply_approval",
    schema: ApplyApprovalSchema,
    right: "apply",
    signer: "approver",
    events: ["apply_approved"],
    lives: "workflow.apply_approvals[]",
    held: perWorkflow((wf) => wf.apply_approvals),
    judged: "workflow",
    relied: (wf, rev) => wf.apply_approvals.slice(-1).filter((a) => a.revision === rev),
    ciJudged: true,
    attestation: "https://twinlock.dev/apply-approval/v1",
    shown: (r) => ({ who: String(r.approver), decision: "apply approved", note: null }),
    mcp: { field: "apply_approvals", many: true },
    published: "apply-approval.schema.json",
  },
  dry_run_result: {
    kind: "dry_run_result",
    schema: DryRunResultSchema,
    right: "apply",
    signer: "by",
    events: ["dry_run_result"],
    lives: "workflow.dry_runs[].result_receipt",
    held: perWorkflow((wf) => wf.dry_runs.flatMap((d) => (d.result_receipt ? [d.result_receipt] : []))),
    judged: "workflow",
    // Judged by the dry-run check (src/run/admission/checks/dry-run-passed.ts), with the same right.
    relied: null,
    ciJudged: true,
    // No predicate type is defined for it yet: verify-receipts and CI judge it.
    attestation: null,
    shown: (r) => ({ who: String(r.by), decision: `dry run ${String(r.result)}`, note: text(r.note) }),
    mcp: { field: "dry_run_results", many: true },
    published: null,
  },
  admission: {
    kind: "admission",
    schema: AdmissionReceiptSchema,
    right: null,
    signer: "actor",
    events: ["admitted", "dry_run_admitted"],
    lives: "workflow.admissions[] (a dry run's admission only in its dry_run_admitted event and workflow.dry_runs[])",
    held: perWorkflow((wf) => wf.admissions),
    judged: null,
    // The record admission is about to make: nobody has signed it yet.
    relied: null,
    // Re-judged from the facts recorded before it (src/ci/rejudge-admissions.ts).
    ciJudged: false,
    attestation: "https://twinlock.dev/admission/v1",
    shown: (r) => ({ who: String(r.actor), decision: "admitted", note: null }),
    mcp: { field: "admissions", many: true },
    published: "admission-receipt.schema.json",
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
    judged: "run",
    // Judged by the hard-stop check: a lift counts only under a trusted stop signature.
    relied: null,
    // Judged in CI's outcome check, the same way.
    ciJudged: false,
    attestation: null,
    shown: (r) => ({ who: String(r.by), decision: `!STOP:${String(r.reason)} lifted`, note: text(r.resolution) }),
    mcp: { field: "stop_resolutions", many: true },
    published: null,
  },
  verification: {
    kind: "verification",
    schema: VerificationReceiptSchema,
    right: "verify",
    signer: "by",
    events: ["closed"],
    lives: "workflow.result.receipt (a verified close's; the event's data.receipt)",
    held: perWorkflow((wf) => (wf.result?.receipt ? [wf.result.receipt] : [])),
    judged: "workflow",
    // Made after execution, so no admission relies on it.
    relied: null,
    ciJudged: true,
    attestation: null,
    shown: (r) => ({ who: String(r.by), decision: "verified", note: null }),
    mcp: { field: "verifications", many: true },
    published: "verification-receipt.schema.json",
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

/** A review's note as one text: its feedback, then each comment by item (`A1: …`), so a receipt list shows all that was signed. */
function reviewNote(r: Record<string, unknown>): string | null {
  const comments = Array.isArray(r.comments) ? (r.comments as Array<{ item?: unknown; text?: unknown }>) : [];
  const parts = [text(r.feedback), ...comments.map((c) => `${String(c.item)}: ${String(c.text)}`)].filter(
    (x): x is string => x !== null && x !== "",
  );
  return parts.length === 0 ? null : parts.join("; ");
}
