import { type KeyObject, sign, verify } from "node:crypto";
import { canonicalJson, hashCanonical } from "../crypto/canonical-hash.js";
import { IntegrityError } from "../errors/errors.js";
import type { RunEvent, RunFile } from "../run/run-schema.js";
import type { GateKey } from "./gate-key.js";
import { parsePublicKeyLine } from "./keys.js";

/**
 * Domain separation: a gate's signature can never be taken for a receipt's
 * (`twinlock-receipt/v1`), an attestation's (DSSE) or anything else signed
 * with an Ed25519 key.
 */
export const GATE_SIGNING_DOMAIN = "twinlock-gate/v1\n";

/** The events the gate itself makes (no person signs them): each carries the gate's signature in its `gate` field. */
export const GATE_RECORD_TYPES: ReadonlySet<string> = new Set(["admitted", "dry_run_admitted", "closed", "failed"]);

/** What a head signature says: the gate recorded this head (every write), or exported it (`twinlock export`). */
export type HeadKind = "checkpoint" | "export";

/** What a gate signs: one of its records (the event's type), a head, or an exec result. */
export type GateStatementKind = HeadKind | "admitted" | "dry_run_admitted" | "closed" | "failed" | "exec_result";

/**
 * The statement a gate signs. The signed bytes are GATE_SIGNING_DOMAIN and
 * then the RFC 8785 canonical JSON of exactly these six fields:
 * - checkpoint / export: `seq` is the run's revision and `head` its chain head;
 * - a record: `seq` is the event's, `head` the sha256 of the event's canonical
 *   form without its `gate` field (it names `prev`, so the whole chain before it);
 * - exec_result: `seq` 0, `head` the sha256 of the result without its signature.
 * Nothing of it is read from what the signature travels with: a verifier
 * builds the statement from the run it holds and the key it trusts.
 */
export interface GateStatement {
  format: "twinlock-gate-statement/1";
  kind: GateStatementKind;
  gate_key: string;
  run_id: string;
  seq: number;
  head: string;
}

/** A gate's signature as it travels: which gate key, and the Ed25519 signature (base64). */
export interface GateSignature {
  gate_key: string;
  value: string;
}

/** A run file's head signature: also says whether it was the gate's checkpoint or its export. */
export interface HeadSignature extends GateSignature {
  kind: HeadKind;
}

/** The exact bytes of a statement's signature. */
export function gateSigningBytes(statement: GateStatement): Buffer {
  return Buffer.from(GATE_SIGNING_DOMAIN + canonicalJson(statement), "utf8");
}

function statementOf(kind: GateStatementKind, gateKey: string, runId: string, seq: number, head: string): GateStatement {
  return { format: "twinlock-gate-statement/1", kind, gate_key: gateKey, run_id: runId, seq, head };
}

/** Sign a statement with the gate's key. */
export function signGateStatement(gate: GateKey, kind: GateStatementKind, runId: string, seq: number, head: string): GateSignature {
  const value = sign(null, gateSigningBytes(statementOf(kind, gate.publicKey, runId, seq, head)), gate.privateKey).toString("base64");
  return { gate_key: gate.publicKey, value };
}

/** True when `signature` is its stated gate key's over this statement (the key's trust is the caller's question). */
export function verifyGateStatement(signature: GateSignature, kind: GateStatementKind, runId: string, seq: number, head: string): boolean {
  const key = publicKey(signature.gate_key);
  if (!key || typeof signature.value !== "string") return false;
  try {
    return verify(
      null,
      gateSigningBytes(statementOf(kind, signature.gate_key, runId, seq, head)),
      key,
      Buffer.from(signature.value, "base64"),
    );
  } catch {
    return false;
  }
}

const keys = new Map<string, KeyObject | undefined>();
function publicKey(line: string): KeyObject | undefined {
  if (typeof line !== "string") return undefined;
  if (!keys.has(line)) {
    if (keys.size > 1000) keys.clear();
    keys.set(line, parsePublicKeyLine(line));
  }
  return keys.get(line);
}

/** The hash a record's signature covers: the event without its `gate` field. */
export function gateRecordHash(event: RunEvent): string {
  const { gate: _g, ...rest } = event;
  return hashCanonical(rest);
}

/** The event with the gate's signature, when it is one of the gate's own records; other events are returned as they are. */
export function signGateRecord(event: RunEvent, runId: string, gate: GateKey): RunEvent {
  if (!GATE_RECORD_TYPES.has(event.type)) return event;
  const { gate: _g, ...unsigned } = event;
  return {
    ...unsigned,
    gate: signGateStatement(gate, event.type as GateStatementKind, runId, event.seq, gateRecordHash(unsigned as RunEvent)),
  };
}

/** A run file's head, signed by the gate as its checkpoint or its export. */
export function signHead(file: RunFile, gate: GateKey, kind: HeadKind): HeadSignature {
  return { kind, ...signGateStatement(gate, kind, file.state.run_id, file.revision, file.head) };
}

/** Why a chain is not under a trusted gate's signature. */
export type GateSignatureProblem =
  | "gate-unsigned-export"
  | "gate-head-unsigned"
  | "gate-key-untrusted"
  | "gate-signature-invalid"
  | "gate-record-unsigned";

/** A chain's gate signatures judged: the gate that signed its head, or the first problem (with the event, for a record). */
export type GateVerdict =
  | { ok: true; headKey: string | undefined; records: number }
  | { ok: false; code: GateSignatureProblem; seq?: number; reason: string };

/**
 * Judge a run's gate signatures against the trusted gate keys: the head
 * signed (as a checkpoint or an export) by a trusted gate, unless `head` is
 * false (the caller's own store vouches for the head); and every record the
 * gate makes (admission, dry-run admission, close, failure) signed by a
 * trusted gate over that very event. A run with no gate signature anywhere
 * was exported before gates signed (`gate-unsigned-export`).
 */
export function judgeGateSignatures(file: RunFile, trusted: ReadonlySet<string>, options: { head?: boolean } = {}): GateVerdict {
  const runId = file.state.run_id;
  const records = file.events.filter((e) => GATE_RECORD_TYPES.has(e.type));
  const wantHead = options.head !== false;
  if (wantHead && file.gate_signature === undefined && !records.some((e) => e.gate !== undefined))
    return {
      ok: false,
      code: "gate-unsigned-export",
      reason: `run ${runId} carries no gate signature (it was exported before gates signed their runs, or rebuilt): export it again with \`twinlock export RUN --out DIR\` from the gate home that made it, after pinning that gate's key (\`twinlock trust gate-key\` there) in gate_keys:`,
    };
  const untrusted = (key: string, what: string): GateVerdict => ({
    ok: false,
    code: "gate-key-untrusted",
    reason: `${what} is signed by gate key ${key.slice(0, 28)}…, which is not among the trusted gate_keys (${trusted.size === 0 ? "none listed" : `${trusted.size} listed`}); pin the gate's key (\`twinlock trust gate-key\` on that gate) if you trust it`,
  });
  let headKey: string | undefined;
  if (wantHead) {
    const s = file.gate_signature;
    if (!s)
      return {
        ok: false,
        code: "gate-head-unsigned",
        reason: `run ${runId}'s head (event ${file.revision}) carries no gate signature: it is not a gate's record or export; export it again with \`twinlock export RUN --out DIR\` from its gate`,
      };
    if (!trusted.has(s.gate_key)) return untrusted(s.gate_key, `run ${runId}'s head`);
    if (!verifyGateStatement(s, s.kind, runId, file.revision, file.head))
      return {
        ok: false,
        code: "gate-signature-invalid",
        reason: `run ${runId}'s head signature does not verify for event ${file.revision} with head ${file.head.slice(0, 19)}…: the run was changed or rebuilt after its gate signed it`,
      };
    headKey = s.gate_key;
  }
  for (const e of records) {
    const what = `${e.type} event ${e.seq} of run ${runId}`;
    if (!e.gate)
      return {
        ok: false,
        code: "gate-record-unsigned",
        seq: e.seq,
        reason: `${what} carries no gate signature: a gate records it signed, so it was made outside any gate`,
      };
    if (!trusted.has(e.gate.gate_key))
      return { ...(untrusted(e.gate.gate_key, what) as { ok: false; code: GateSignatureProblem; reason: string }), seq: e.seq };
    if (!verifyGateStatement(e.gate, e.type as GateStatementKind, runId, e.seq, gateRecordHash(e)))
      return {
        ok: false,
        code: "gate-signature-invalid",
        seq: e.seq,
        reason: `${what}'s gate signature does not verify: the event was changed, moved or made outside the gate`,
      };
  }
  return { ok: true, headKey, records: records.length };
}

/** Throw unless the run is under a trusted gate's signatures (see `judgeGateSignatures`): an IntegrityError naming the check. */
export function requireGateSigned(file: RunFile, trusted: ReadonlySet<string>, where: string, options: { head?: boolean } = {}): void {
  const v = judgeGateSignatures(file, trusted, options);
  if (!v.ok)
    throw new IntegrityError(`${where}: ${v.reason}`, {
      check: "gate-signature",
      attack: v.code,
      ...(v.seq !== undefined ? { seq: v.seq } : {}),
    });
}

/** The trusted gate keys of a trust config (`gate_keys:`), with any the caller adds (a store's own). */
export function trustedGateKeys(config: { gate_keys?: ReadonlyArray<{ public_key: string }> }, ...own: string[]): Set<string> {
  return new Set([...(config.gate_keys ?? []).map((g) => g.public_key), ...own]);
}
