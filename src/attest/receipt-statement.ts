import { receiptHash } from "../run/receipt-hash.js";
import { type RECEIPT_KINDS, RECEIPT_ROWS, type ReceiptKind } from "../run/receipt-kinds.js";
import type { AdmissionReceipt, ApplyApproval, ConsentReceipt, ReviewReceipt } from "../run/run-schema.js";
import { RECEIPT_SIGNING_DOMAIN, type ReceiptSignature } from "../trust/sign-receipt.js";

/** in-toto Statement v1's `_type` (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md). */
export const IN_TOTO_STATEMENT_TYPE = "https://in-toto.io/Statement/v1";

/** The DSSE payload type of an in-toto statement. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

/** A receipt kind that has an attestation: one whose row in RECEIPT_KINDS names a predicate type. */
export type AttestedKind = {
  [K in ReceiptKind]: (typeof RECEIPT_KINDS)[K]["attestation"] extends string ? K : never;
}[ReceiptKind];

/** The receipts twinlock attests, and the predicate type of each, as RECEIPT_KINDS gives them. */
export const PREDICATE_TYPES = Object.fromEntries(
  RECEIPT_ROWS.flatMap((row) => (row.attestation === null ? [] : [[row.kind, row.attestation]])),
) as { [K in AttestedKind]: (typeof RECEIPT_KINDS)[K]["attestation"] };

/** Whether a receipt kind has an attestation. */
export function isAttestedKind(kind: string): kind is AttestedKind {
  return Object.hasOwn(PREDICATE_TYPES, kind);
}

/** A receipt that has an attestation. */
export type AttestedReceipt = ReviewReceipt | ConsentReceipt | ApplyApproval | AdmissionReceipt;

/** One in-toto subject: a name and its sha256. */
export interface Subject {
  name: string;
  digest: { sha256: string };
}

/** An in-toto Statement v1 about one twinlock receipt. */
export interface ReceiptStatement {
  _type: typeof IN_TOTO_STATEMENT_TYPE;
  subject: Subject[];
  predicateType: (typeof PREDICATE_TYPES)[AttestedKind];
  predicate: ReceiptPredicate;
}

/**
 * How the receipt itself was signed, so a verifier can check the person's
 * own signature without twinlock: the Ed25519 signature is over
 * `signed_bytes` as the rule says; a passkey's WebAuthn assertion is over a
 * challenge derived from the same bytes; an admission is the gate's record
 * of its checks and carries no person's signature.
 */
export type ReceiptEvidence =
  | { scheme: "ed25519"; rule: string; public_key: string; signer: string }
  | {
      scheme: "webauthn";
      rule: string;
      public_key: string;
      signer: string;
      credential_id: string;
      /** The assertion itself, as the authenticator returned it (base64url), so a verifier needs no twinlock record. */
      assertion: { authenticator_data: string; client_data_json: string; signature: string };
    }
  | { scheme: "unsigned"; rule: string };

/** What a twinlock predicate holds: the whole receipt (its signature included), its hash, the evidence rule and its place in the run's chain. */
export interface ReceiptPredicate {
  run_id: string;
  planner: string;
  executor: string;
  receipt: AttestedReceipt;
  receipt_hash: string;
  evidence: ReceiptEvidence;
  /** Where the receipt sits in the run's hash chain when attested: the event, its hash, and the head. */
  chain: { event_seq: number; event_hash: string; head: string };
}

/** The subjects of a receipt: the handoff manifest by its hash and the executor prompt file by its digest. */
export function receiptSubjects(
  receipt: { planner: string; executor: string; revision: number; handoff_hash: string },
  executorDigest: string,
): Subject[] {
  return [
    { name: `twinlock-handoff/${receipt.planner}/revision-${receipt.revision}`, digest: { sha256: hexOf(receipt.handoff_hash) } },
    { name: `twinlock-prompt/${receipt.executor}`, digest: { sha256: hexOf(executorDigest) } },
  ];
}

/**
 * The in-toto statement about one receipt (pure). `executorDigest` is the
 * receipt's own `executor_digest`, or for an apply approval and an
 * admission, that of the consent they name by hash.
 */
export function receiptStatement(receipt: AttestedReceipt, executorDigest: string, chain: ReceiptPredicate["chain"]): ReceiptStatement {
  return {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: receiptSubjects(receipt, executorDigest),
    predicateType: PREDICATE_TYPES[receipt.kind],
    predicate: {
      run_id: receipt.run_id,
      planner: receipt.planner,
      executor: receipt.executor,
      receipt,
      receipt_hash: receiptHash(receipt),
      evidence: evidenceOf(receipt),
      chain,
    },
  };
}

/** The rule a receipt's signature follows, stated so that another tool can rebuild the signed bytes. */
export const RECEIPT_SIGNED_BYTES_RULE = `${JSON.stringify(RECEIPT_SIGNING_DOMAIN)} followed by the RFC 8785 canonical JSON of the receipt without its signature and consumed_at fields`;

/** How a receipt was signed, taken from the receipt's own signature: the predicate's `evidence`. */
export function evidenceOf(receipt: AttestedReceipt): ReceiptEvidence {
  const s = ("signature" in receipt ? receipt.signature : undefined) as ReceiptSignature | undefined;
  if (!s)
    return {
      scheme: "unsigned",
      rule:
        receipt.kind === "admission"
          ? "an admission is the gate's record of the checks it ran; no person signs it, and the chain and the attester vouch for it"
          : "this receipt was recorded unsigned (the suite's policy allowed it): it proves nothing about who decided",
    };
  if (s.kind === "webauthn")
    return {
      scheme: "webauthn",
      rule: `a WebAuthn assertion (authenticator data, client data JSON, signature) whose challenge is the sha256 of ${RECEIPT_SIGNED_BYTES_RULE}`,
      public_key: s.public_key,
      signer: s.signer,
      credential_id: s.credential_id ?? "",
      assertion: { authenticator_data: s.authenticator_data ?? "", client_data_json: s.client_data_json ?? "", signature: s.value },
    };
  return { scheme: "ed25519", rule: `Ed25519 over ${RECEIPT_SIGNED_BYTES_RULE}`, public_key: s.public_key, signer: s.signer };
}

function hexOf(hash: string): string {
  return hash.startsWith("sha256:") ? hash.slice("sha256:".length) : hash;
}
