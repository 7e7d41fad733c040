import type { KeyObject } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { ZodMiniType } from "zod/mini";
import { receiptHash } from "../run/receipt-hash.js";
import { RECEIPT_KINDS } from "../run/receipt-kinds.js";
import type { RunFile } from "../run/run-schema.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { judgeReceiptTrust, type Right } from "../trust/judge-receipt-trust.js";
import { type ReceiptSignature, verifyReceiptSignature } from "../trust/sign-receipt.js";
import { verifyDsseEnvelope } from "./dsse-envelope.js";
import {
  type AttestedKind,
  type AttestedReceipt,
  evidenceOf,
  IN_TOTO_PAYLOAD_TYPE,
  IN_TOTO_STATEMENT_TYPE,
  isAttestedKind,
  PREDICATE_TYPES,
  type ReceiptStatement,
  receiptSubjects,
} from "./receipt-statement.js";

/** What an attestation is checked against: the run it must belong to, who may attest, and (optionally) the trusted reviewers. */
export interface AttestationExpectation {
  /** The run, already verified (chain and replay): the receipt must be one its chain recorded. */
  run: RunFile;
  /** Public keys trusted to sign envelopes, by name. */
  attesters: ReadonlyMap<string, KeyObject>;
  /** When given, the receipt's own signature must come from one of these reviewers with the right its kind needs. */
  reviewers?: SuiteConfig;
}

/** Why an attestation was refused. */
export type AttestationProblem =
  | "bad-envelope"
  | "not-in-toto"
  | "bad-receipt"
  | "other-run"
  | "not-in-run"
  | "subject-mismatch"
  | "bad-evidence";

/** An attestation's verdict: the statement, or the first problem found. */
export type AttestationVerdict =
  | { ok: true; statement: ReceiptStatement; attester: string }
  | { ok: false; code: AttestationProblem; reason: string };

/** An attested kind's schema, from RECEIPT_KINDS. */
const schemaOf = (kind: AttestedKind) => RECEIPT_KINDS[kind].schema as unknown as ZodMiniType<AttestedReceipt>;

/**
 * Check one attestation envelope end to end, without trusting anything it
 * says about itself: the DSSE signature under a trusted attester key; an
 * in-toto statement with a twinlock predicate type matching the receipt;
 * the receipt recorded in this very run's chain (a receipt from another
 * run, or one never recorded, is refused); subjects equal to the handoff
 * hash and executor digest the receipt binds; and the receipt's own
 * signature (the person's evidence) valid, and trusted when reviewers are given.
 */
export function verifyAttestation(envelope: unknown, expect: AttestationExpectation): AttestationVerdict {
  const dsse = verifyDsseEnvelope(envelope, expect.attesters);
  if (!dsse.ok) return fail("bad-envelope", `the DSSE envelope does not verify: ${dsse.reason}`);
  if (dsse.payloadType !== IN_TOTO_PAYLOAD_TYPE)
    return fail("not-in-toto", `the payload type is ${dsse.payloadType}, not ${IN_TOTO_PAYLOAD_TYPE}`);
  let statement: ReceiptStatement;
  try {
    statement = JSON.parse(dsse.payload.toString("utf8")) as ReceiptStatement;
  } catch {
    return fail("not-in-toto", "the payload is not JSON");
  }
  if (statement?._type !== IN_TOTO_STATEMENT_TYPE) return fail("not-in-toto", `the payload is not an in-toto Statement v1`);
  const raw = statement.predicate?.receipt as { kind?: string } | undefined;
  const kind = raw?.kind;
  if (typeof kind !== "string" || !isAttestedKind(kind))
    return fail("bad-receipt", "the predicate holds no review, consent, apply approval or admission receipt");
  const parsed = schemaOf(kind).safeParse(raw);
  if (!parsed.success)
    return fail("bad-receipt", `the predicate's ${kind} receipt is malformed (${parsed.error.issues[0]?.path.join(".")})`);
  const receipt = parsed.data;
  if (statement.predicateType !== PREDICATE_TYPES[kind])
    return fail("bad-receipt", `the predicate type ${statement.predicateType} does not match the ${kind} receipt`);
  const hash = receiptHash(receipt);
  const p = statement.predicate;
  if (p.receipt_hash !== hash || p.run_id !== receipt.run_id || p.planner !== receipt.planner || p.executor !== receipt.executor)
    return fail("bad-receipt", "the predicate's run, pair or receipt hash differ from the receipt it holds");
  const runId = expect.run.state.run_id;
  if (receipt.run_id !== runId) return fail("other-run", `the receipt belongs to run ${receipt.run_id}, not ${runId}`);
  const recorded = expect.run.events.some((e) => {
    const r = (e.data as { receipt?: object }).receipt;
    return r !== undefined && receiptHash(r) === hash;
  });
  if (!recorded) return fail("not-in-run", `run ${runId} never recorded this ${kind} receipt (${hash})`);
  const digest = executorDigest(expect.run, receipt);
  if (!digest || !isDeepStrictEqual(statement.subject, receiptSubjects(receipt, digest)))
    return fail("subject-mismatch", "the subjects are not the handoff hash and executor prompt digest the receipt binds");
  if (!isDeepStrictEqual(p.evidence, evidenceOf(receipt)))
    return fail(
      "bad-evidence",
      "the predicate's evidence is not the receipt's own signature (scheme, key, credential or assertion differ)",
    );
  const evidence = judgeEvidence(receipt, expect.reviewers);
  if (evidence) return fail("bad-evidence", evidence);
  return { ok: true, statement, attester: dsse.signers[0] as string };
}

function fail(code: AttestationProblem, reason: string): AttestationVerdict {
  return { ok: false, code, reason };
}

/** The executor digest the receipt binds, through its consent for an apply approval or admission. */
function executorDigest(run: RunFile, receipt: AttestedReceipt): string | undefined {
  if ("executor_digest" in receipt) return receipt.executor_digest;
  for (const wf of Object.values(run.state.workflows))
    for (const c of wf.consents) if (receiptHash(c) === receipt.consent_hash) return c.executor_digest;
  return undefined;
}

/** Why the receipt's own signature fails, or undefined when it holds (an admission has none to check). */
function judgeEvidence(receipt: AttestedReceipt, reviewers: SuiteConfig | undefined): string | undefined {
  // An admission's right is null: it is the gate's record, and the chain and the attester vouch for it (SPEC §12).
  const right: Right | null = RECEIPT_KINDS[receipt.kind].right;
  if (right === null) return undefined;
  const r = receipt as AttestedReceipt & { signature?: ReceiptSignature };
  if (reviewers) {
    const verdict = judgeReceiptTrust(r, right, { ...reviewers, policies: { ...reviewers.policies, require_signed_receipts: true } });
    return verdict.ok ? undefined : verdict.reason;
  }
  if (!r.signature) return `the ${receipt.kind} receipt is unsigned: it proves nothing about who decided`;
  if (r.signature.kind === "webauthn")
    return `the ${receipt.kind} receipt is signed by a passkey, which can be judged only against its enrolment: give the trusted reviewers`;
  return verifyReceiptSignature(r) ? undefined : `the ${receipt.kind} receipt's own signature does not verify`;
}
