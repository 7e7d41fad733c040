/**
 * A run whose review and consent were signed with a passkey in the gate
 * server: `attest` carries each WebAuthn assertion as the predicate's
 * evidence, and `verifyAttestation` holds it against the enrolled passkey.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admit } from "../gate/admit.js";
import { withEnrolledReviewers } from "../passkey/enrolled-reviewers.js";
import type { RunFile } from "../run/run-schema.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import {
  EXECUTOR,
  freezeApproveConsent,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
} from "../test-support/gate-server-fixture.js";
import { MALLORY_KEY } from "../test-support/signed-run.js";
import { publicKeyLine } from "../trust/keys.js";
import { type Attestation, attestRun, type RunAttestations } from "./attest-run.js";
import { signDsseEnvelope } from "./dsse-envelope.js";
import { IN_TOTO_PAYLOAD_TYPE } from "./receipt-statement.js";
import { verifyAttestation } from "./verify-attestation.js";

const ATTESTER = MALLORY_KEY;
const attesters = new Map<string, KeyObject>([["release", createPublicKey(ATTESTER)]]);

let w: ServerWorld;
let made: RunAttestations;
let run: RunFile;
let enrolled: SuiteConfig;

beforeAll(async () => {
  w = await serverWorld();
  const alice = await reviewerFor(w, "alice");
  await freezeApproveConsent(w, alice);
  expect((await admit({ store: w.store, run: w.runFile, executor: EXECUTOR, actor: "executor-agent" })).admitted).toBe(true);
  made = await attestRun({ store: w.store, run: w.runFile, key: ATTESTER });
  run = (await w.store.read(w.runFile)).file;
  // The trusted reviewers are the gate home's enrolments: alice's passkey with its rights and scope.
  enrolled = withEnrolledReviewers({}, w.home);
});
afterAll(removeServerWorlds);

const passkeyAttestations = () => made.attestations.filter((a) => a.statement.predicate.evidence.scheme === "webauthn");

/** The attestation with `edit` applied to its decoded statement, re-signed by the attester (who is trusted to sign envelopes, not decisions). */
function resigned(a: Attestation, edit: (sig: Record<string, string>) => void): unknown {
  const statement = structuredClone(a.statement);
  edit((statement.predicate.receipt as unknown as { signature: Record<string, string> }).signature);
  const evidence = statement.predicate.evidence as { assertion?: Record<string, string>; scheme: string };
  const sig = (statement.predicate.receipt as unknown as { signature: Record<string, string> }).signature;
  if (evidence.assertion)
    evidence.assertion = {
      authenticator_data: sig.authenticator_data ?? "",
      client_data_json: sig.client_data_json ?? "",
      signature: sig.value ?? "",
    };
  return signDsseEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(statement), "utf8"), ATTESTER, publicKeyLine(ATTESTER));
}

/** One byte of a field flipped, in the field's own encoding (the signature `value` is base64, the rest base64url). */
function flipByte(text: string, encoding: "base64" | "base64url" = "base64url", at = 5): string {
  const bytes = Buffer.from(text, encoding);
  bytes[at] = (bytes[at] as number) ^ 1;
  return bytes.toString(encoding);
}

describe("attest on a run signed with passkeys", () => {
  it("exports the review and consent with the WebAuthn assertion as the predicate's evidence", () => {
    expect(passkeyAttestations().map((a) => a.kind)).toEqual(["review", "consent"]);
    for (const a of passkeyAttestations()) {
      const evidence = a.statement.predicate.evidence;
      const sig = (a.statement.predicate.receipt as unknown as { signature: Record<string, string> }).signature;
      expect(evidence).toMatchObject({ scheme: "webauthn", signer: "alice", public_key: sig.public_key, credential_id: sig.credential_id });
      expect(evidence.scheme === "webauthn" && evidence.assertion).toEqual({
        authenticator_data: sig.authenticator_data,
        client_data_json: sig.client_data_json,
        signature: sig.value,
      });
      expect(JSON.parse(Buffer.from(sig.client_data_json as string, "base64url").toString("utf8"))).toMatchObject({ type: "webauthn.get" });
    }
  });

  it("verifies each passkey attestation against the gate home's enrolled passkey, and refuses it without the enrolment", () => {
    for (const a of passkeyAttestations()) {
      expect(verifyAttestation(a.envelope, { run, attesters, reviewers: enrolled })).toMatchObject({ ok: true });
      expect(verifyAttestation(a.envelope, { run, attesters, reviewers: {} })).toMatchObject({ ok: false, code: "bad-evidence" });
      expect(verifyAttestation(a.envelope, { run, attesters })).toMatchObject({ ok: false, code: "bad-evidence" });
    }
  });

  it("refuses it when one byte of the assertion changes, even re-signed by the attester", () => {
    for (const a of passkeyAttestations()) {
      for (const field of ["value", "authenticator_data", "client_data_json"])
        expect(
          verifyAttestation(
            resigned(a, (s) => {
              s[field] = flipByte(s[field] as string, field === "value" ? "base64" : "base64url");
            }),
            { run, attesters, reviewers: enrolled },
          ),
          field,
        ).toMatchObject({ ok: false, code: "bad-evidence" });
      expect(verifyAttestation(a.envelope, { run, attesters, reviewers: enrolled })).toMatchObject({ ok: true });
    }
  });

  it("refuses evidence that differs from the receipt's own assertion", () => {
    const a = passkeyAttestations()[0] as Attestation;
    const statement = structuredClone(a.statement);
    const evidence = statement.predicate.evidence;
    if (evidence.scheme !== "webauthn") throw new Error("not a passkey attestation");
    evidence.assertion.signature = flipByte(evidence.assertion.signature, "base64");
    const envelope = signDsseEnvelope(
      IN_TOTO_PAYLOAD_TYPE,
      Buffer.from(JSON.stringify(statement), "utf8"),
      ATTESTER,
      publicKeyLine(ATTESTER),
    );
    expect(verifyAttestation(envelope, { run, attesters, reviewers: enrolled })).toMatchObject({ ok: false, code: "bad-evidence" });
  });
});
