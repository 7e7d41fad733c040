import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { bundleFromJSON } from "@sigstore/bundle";
import { type TrustMaterial, toSignedEntity, Verifier } from "@sigstore/verify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSuiteConfig } from "../suite/load-suite.js";
import { runCli } from "../test-support/run-cli.js";
import { type GateRun, homeOf, makeGateRun, makeRunTempDir, removeGateRuns, storeOf } from "../test-support/run-fixture.js";
import { ALICE_KEY, aliceTrustFile, driveSignedToExecuting, MALLORY_KEY } from "../test-support/signed-run.js";
import { ensureGateKey } from "../trust/gate-key.js";
import { generateReviewerKey, publicKeyLine } from "../trust/keys.js";
import { attestRun, type RunAttestations } from "./attest-run.js";
import { signDsseEnvelope } from "./dsse-envelope.js";
import { IN_TOTO_PAYLOAD_TYPE } from "./receipt-statement.js";
import { verifyAttestation } from "./verify-attestation.js";

/** The attesting person's key: not a reviewer, just whoever runs `attest`. */
const ATTESTER = MALLORY_KEY;
const attesterLine = publicKeyLine(ATTESTER);
const attesters = new Map<string, KeyObject>([["release", createPublicKey(ATTESTER)]]);
const reviewers = parseSuiteConfig(aliceTrustFile()).config;

/** @sigstore/verify's own verifier, trusting exactly one public key by its hint and no log or timestamp authority. */
function sigstoreVerify(bundleJson: unknown): void {
  const material: TrustMaterial = {
    certificateAuthorities: [],
    timestampAuthorities: [],
    tlogs: [],
    ctlogs: [],
    publicKey: (hint) => {
      if (hint !== attesterLine) throw new Error(`unknown key hint ${hint}`);
      return { publicKey: createPublicKey(ATTESTER), validFor: () => true };
    },
  };
  const verifier = new Verifier(material, { tlogThreshold: 0, ctlogThreshold: 0, tsaThreshold: 0 });
  verifier.verify(toSignedEntity(bundleFromJSON(bundleJson)));
}

let g: GateRun;
let other: GateRun;
let made: RunAttestations;
let otherMade: RunAttestations;
const runOf = async (x: GateRun) => (await storeOf(x).read(x.runFile)).file;

beforeAll(async () => {
  g = makeGateRun();
  await driveSignedToExecuting(g, { mode: "APPLY_APPROVED" });
  made = await attestRun({ store: storeOf(g), run: g.runFile, key: ATTESTER });
  other = makeGateRun();
  await driveSignedToExecuting(other);
  otherMade = await attestRun({ store: storeOf(other), run: other.runFile, key: ATTESTER });
});
afterAll(removeGateRuns);

/** The envelope with one byte of its decoded payload flipped (JSON stays JSON: a digit of a subject digest). */
function flipSubjectByte(envelope: { payload: string }): string {
  const text = Buffer.from(envelope.payload, "base64").toString("utf8");
  const at = text.indexOf('"sha256":"') + 10;
  const c = text[at] === "0" ? "1" : "0";
  return Buffer.from(text.slice(0, at) + c + text.slice(at + 1), "utf8").toString("base64");
}

describe("twinlock attest", () => {
  it("attests every review, consent, apply approval and admission as an in-toto statement about the handoff and the executor prompt", () => {
    expect(made.attestations.map((a) => a.kind)).toEqual(["review", "consent", "apply_approval", "admission"]);
    for (const a of made.attestations) {
      expect(a.statement._type).toBe("https://in-toto.io/Statement/v1");
      expect(a.envelope.payloadType).toBe(IN_TOTO_PAYLOAD_TYPE);
      expect(a.statement.subject.map((s) => s.name)).toEqual(["twinlock-handoff/MD-29/revision-1", "twinlock-prompt/MD-30"]);
      expect(`sha256:${a.statement.subject[0]?.digest.sha256}`).toBe(a.statement.predicate.receipt.handoff_hash);
    }
    expect(made.attestations[0]?.statement.predicateType).toBe("https://twinlock.dev/review/v1");
    expect(made.attestations[2]?.statement.predicateType).toBe("https://twinlock.dev/apply-approval/v1");
  });

  it("carries the reviewer's own signature as evidence in the predicate, not as the envelope's signature", () => {
    const review = made.attestations[0]?.statement.predicate;
    expect(review?.evidence).toMatchObject({ scheme: "ed25519", public_key: publicKeyLine(ALICE_KEY), signer: "alice" });
    expect(made.attestations[0]?.envelope.signatures[0]?.keyid).toBe(attesterLine);
    expect(made.attestations[3]?.statement.predicate.evidence.scheme).toBe("unsigned");
  });

  it("writes bundles that @sigstore/verify accepts under the attester's public key", () => {
    for (const a of made.attestations) expect(() => sigstoreVerify(JSON.parse(JSON.stringify(a.bundle)))).not.toThrow();
  });

  it("writes envelopes that verify against the run, the attester and the trusted reviewers", async () => {
    const run = await runOf(g);
    for (const a of made.attestations) expect(verifyAttestation(a.envelope, { run, attesters, reviewers })).toMatchObject({ ok: true });
  });

  it("refuses every attestation after a one-byte change of its payload, signature or subject", async () => {
    const run = await runOf(g);
    const a = made.attestations[0];
    if (!a) throw new Error("no attestation");
    const payload = Buffer.from(a.envelope.payload, "base64");
    payload[payload.length - 2] = (payload[payload.length - 2] as number) ^ 1;
    const sig = Buffer.from(a.envelope.signatures[0]?.sig ?? "", "base64");
    sig[0] = (sig[0] as number) ^ 1;
    const changed = [
      { ...a.envelope, payload: payload.toString("base64") },
      { ...a.envelope, signatures: [{ keyid: attesterLine, sig: sig.toString("base64") }] },
      { ...a.envelope, payload: flipSubjectByte(a.envelope) },
    ];
    for (const envelope of changed) {
      expect(verifyAttestation(envelope, { run, attesters, reviewers })).toMatchObject({ ok: false, code: "bad-envelope" });
      expect(() => sigstoreVerify({ ...a.bundle, dsseEnvelope: envelope })).toThrow();
    }
  });

  it("refuses a changed subject even when the attester signs it again", async () => {
    const run = await runOf(g);
    const a = made.attestations[1];
    if (!a) throw new Error("no attestation");
    const resigned = signDsseEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(flipSubjectByte(a.envelope), "base64"), ATTESTER);
    expect(verifyAttestation(resigned, { run, attesters, reviewers })).toMatchObject({ ok: false, code: "subject-mismatch" });
  });

  it("does not verify a receipt from another run as this run's", async () => {
    const run = await runOf(g);
    for (const a of otherMade.attestations)
      expect(verifyAttestation(a.envelope, { run, attesters, reviewers })).toMatchObject({ ok: false, code: "other-run" });
  });

  it("refuses an envelope signed by a key that is not a trusted attester", async () => {
    const run = await runOf(g);
    const a = made.attestations[0];
    if (!a) throw new Error("no attestation");
    const forged = signDsseEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(a.envelope.payload, "base64"), ALICE_KEY);
    expect(verifyAttestation(forged, { run, attesters, reviewers })).toMatchObject({ ok: false, code: "bad-envelope" });
  });

  it("refuses a review whose own signature is not by a trusted reviewer", async () => {
    const run = await runOf(g);
    const strangers = parseSuiteConfig(aliceTrustFile(MALLORY_KEY)).config;
    const a = made.attestations[0];
    expect(verifyAttestation(a?.envelope, { run, attesters, reviewers: strangers })).toMatchObject({ ok: false, code: "bad-evidence" });
  });

  it("writes each attestation as a DSSE envelope and a Sigstore bundle from the CLI, and asks for a key without one", async () => {
    const dir = makeRunTempDir("twinlock-attest-");
    const keyFile = path.join(dir, "release.key");
    writeFileSync(keyFile, ATTESTER.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    const out = path.join(dir, "out");
    const r = await runCli(["attest", g.runFile, "--out", out, "--key", keyFile, "--home", g.home]);
    expect(r.code, r.output).toBe(0);
    const files = readdirSync(out).sort();
    expect(files).toContain("MD-29-rev1-review-1.intoto.json");
    expect(files).toContain("MD-29-rev1-admission-1.sigstore.json");
    expect(files).toHaveLength(8);
    sigstoreVerify(JSON.parse(readFileSync(path.join(out, "MD-29-rev1-consent-1.sigstore.json"), "utf8")));
    const none = await runCli(["attest", g.runFile, "--out", out, "--key", "", "--home", g.home]);
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split("\n")).toHaveLength(1);

    // Anyone checks them offline with verify-attestation: the attester's .pub, the run, and the reviewers file.
    const pub = path.join(dir, "release.pub");
    writeFileSync(pub, `${publicKeyLine(ATTESTER)}\n`);
    const trust = path.join(dir, "reviewers.yaml");
    // …and the gate's key, pinned as `twinlock trust gate-key` printed it: the run is the gate's, not a rebuilt one.
    writeFileSync(trust, aliceTrustFile(ALICE_KEY, [(await ensureGateKey(homeOf(g))).publicKey]));
    const all = files.map((f) => path.join(out, f));
    const checked = await runCli(["verify-attestation", ...all, "--run", g.runFile, "--attester", pub, "--trust", trust]);
    expect(checked.code, checked.output).toBe(0);
    expect(checked.stdout).toContain("8 attestations verified, receipts signed by trusted reviewers");
    const stranger = path.join(dir, "stranger.pub");
    writeFileSync(stranger, `${publicKeyLine(createPrivateKey(generateReviewerKey().privatePem))}\n`);
    const refused = await runCli(["verify-attestation", all[0] as string, "--run", g.runFile, "--attester", stranger, "--trust", trust]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^FAIL {2}.*: bad-envelope: /m);
    // Without the trust file there is no gate key to hold the run to: refused, saying what to give.
    const untrusted = await runCli(["verify-attestation", all[0] as string, "--run", g.runFile, "--attester", pub]);
    expect(untrusted.code).toBe(2);
    expect(untrusted.stderr).toMatch(/give --trust FILE: the twinlock.yaml .* whose gate_keys: pin the gate that recorded the run/);
  });
});
