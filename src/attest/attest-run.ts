import type { KeyObject } from "node:crypto";
import { UsageError } from "../errors/errors.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { listTrustedGateKeys } from "../home/trusted-gate-keys.js";
import { hashEvent } from "../run/event-chain.js";
import { receiptHash } from "../run/receipt-hash.js";
import { heldReceipts } from "../run/receipt-kinds.js";
import type { RunFile, Workflow } from "../run/run-schema.js";
import type { RunStore } from "../store/run-store.js";
import { ensureGateKey } from "../trust/gate-key.js";
import { requireGateSigned, trustedGateKeys } from "../trust/gate-statement.js";
import { publicKeyLine } from "../trust/keys.js";
import { type DsseEnvelope, signDsseEnvelope } from "./dsse-envelope.js";
import {
  type AttestedReceipt,
  IN_TOTO_PAYLOAD_TYPE,
  isAttestedKind,
  type ReceiptStatement,
  receiptStatement,
} from "./receipt-statement.js";
import { type SigstoreBundle, toSigstoreBundle } from "./sigstore-bundle.js";

/** One receipt's attestation: the statement, its DSSE envelope and the same envelope as a Sigstore bundle. */
export interface Attestation {
  /** A file-name-safe name: planner, revision, kind and its order among that workflow's receipts of the kind. */
  name: string;
  kind: AttestedReceipt["kind"];
  planner: string;
  statement: ReceiptStatement;
  envelope: DsseEnvelope;
  bundle: SigstoreBundle;
}

/** Every attestation of a run and who signed the envelopes. */
export interface RunAttestations {
  run_id: string;
  head: string;
  /** The attester's public key line: the DSSE keyid and the bundle's key hint. */
  attester: string;
  attestations: Attestation[];
}

/**
 * Attest every review, consent, apply approval and admission of a run,
 * read verified from its store. The DSSE envelopes are signed by the
 * attester's key (the person running `attest`): twinlock never holds a
 * reviewer's private key, so the reviewer's own signature travels inside
 * the predicate as evidence that anyone can check against the reviewer's key.
 */
export async function attestRun(input: { store: RunStore; run: string; key: KeyObject | undefined }): Promise<RunAttestations> {
  if (!input.key)
    throw new UsageError(
      "attest signs its envelopes with your Ed25519 key: pass --key FILE (made by `twinlock keygen`) or set TWINLOCK_KEY",
    );
  const attester = publicKeyLine(input.key);
  const run = await input.store.read(input.run);
  // The store vouches for the head it holds; every record the gate made in it (a run imported from another gate
  // included) must be signed by this store's gate or one its pin of the suite trusts.
  const own = await ensureGateKey(input.store.home);
  const pinned = loadPinnedPolicy(input.store.home, run.state.suite);
  const homeTrusts = listTrustedGateKeys(input.store.home).map((g) => g.public_key);
  requireGateSigned(
    run.file,
    trustedGateKeys(pinned.config, own.publicKey, ...homeTrusts),
    `attest refused (gate signature of run ${run.state.run_id})`,
    {
      head: false,
    },
  );
  return {
    run_id: run.state.run_id,
    head: run.file.head,
    attester,
    attestations: attestationsOf(run.file, input.key, attester),
  };
}

/** The attestations of a verified run file (pure apart from signing). */
export function attestationsOf(file: RunFile, key: KeyObject, attester: string): Attestation[] {
  const out: Attestation[] = [];
  for (const wf of Object.values(file.state.workflows)) {
    const counts = new Map<string, number>();
    const placed = receiptsOf(file, wf)
      .map((receipt) => ({ receipt, place: chainPlace(file, receipt) }))
      .sort((a, b) => a.place.event_seq - b.place.event_seq);
    for (const { receipt, place } of placed) {
      const n = (counts.get(`${receipt.kind}-${receipt.revision}`) ?? 0) + 1;
      counts.set(`${receipt.kind}-${receipt.revision}`, n);
      const statement = receiptStatement(receipt, executorDigestOf(wf, receipt), place);
      const envelope = signDsseEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(statement), "utf8"), key, attester);
      out.push({
        name: `${wf.planner}-rev${receipt.revision}-${receipt.kind.replace("_", "-")}-${n}`,
        kind: receipt.kind,
        planner: wf.planner,
        statement,
        envelope,
        bundle: toSigstoreBundle(envelope, attester),
      });
    }
  }
  return out;
}

/** A workflow's attested receipts, as recorded (a consent without the home's `consumed_at` bookkeeping). */
export function receiptsOf(file: RunFile, wf: Workflow): AttestedReceipt[] {
  return heldReceipts(file.state)
    .filter((h) => h.planner === wf.planner && isAttestedKind(h.row.kind))
    .map((h) => h.receipt as unknown as AttestedReceipt);
}

/** The executor prompt digest a receipt binds: its own, or the consent's it names by hash. */
function executorDigestOf(wf: Workflow, receipt: AttestedReceipt): string {
  if ("executor_digest" in receipt) return receipt.executor_digest;
  const consent = wf.consents.find((c) => receiptHash(c) === receipt.consent_hash);
  // Replay guarantees the consent exists; a run without it could not have recorded the receipt.
  if (!consent) throw new UsageError(`the ${receipt.kind} receipt names consent ${receipt.consent_hash}, which this run does not hold`);
  return consent.executor_digest;
}

/** The event that recorded the receipt, its hash, and the run's head. */
function chainPlace(file: RunFile, receipt: AttestedReceipt): { event_seq: number; event_hash: string; head: string } {
  const hash = receiptHash(receipt);
  const event = file.events.find((e) => {
    const r = (e.data as { receipt?: object }).receipt;
    return r !== undefined && receiptHash(r) === hash;
  });
  if (!event) throw new UsageError(`the ${receipt.kind} receipt ${hash} is in the state but in no event; run \`twinlock verify-log\``);
  return { event_seq: event.seq, event_hash: hashEvent(event), head: file.head };
}
