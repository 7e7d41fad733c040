/**
 * The gate's own identity: a chain whose human receipts are all genuine is
 * still no evidence unless the gate that recorded it signed its head and its
 * own records (admission, close…). Each attack here is what an agent that
 * holds an export (but no gate's key) can make with twinlock's own functions.
 */
import { createPrivateKey } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { attestationsOf } from "../attest/attest-run.js";
import { hashCanonical } from "../crypto/canonical-hash.js";
import { recordExecResult } from "../home/exec-results.js";
import { openGateHome } from "../home/gate-home.js";
import { readCheckpoint } from "../home/run-checkpoints.js";
import { replayEvents } from "../run/apply-event.js";
import { hashEvent } from "../run/event-chain.js";
import type { RunFile } from "../run/run-schema.js";
import { readRunFile, verifyRunFile } from "../store/run-file.js";
import { consentedThenStoppedAndAbandoned, rebuildWithoutTheStop, signingGateRun } from "../test-support/gate-signed-run.js";
import { runCli } from "../test-support/run-cli.js";
import { driveTo, homeOf, makeGateRun, makeRunTempDir, removeGateRuns } from "../test-support/run-fixture.js";
import { ensureGateKey } from "./gate-key.js";
import {
  type GateSignature,
  type GateStatementKind,
  gateRecordHash,
  judgeGateSignatures,
  signGateStatement,
  signHead,
  verifyGateStatement,
} from "./gate-statement.js";
import { generateReviewerKey, publicKeyLine } from "./keys.js";

afterAll(removeGateRuns);

/** The issue's run, exported by its gate: run.json and the trust.json that came with it (copied where the agent cannot write). */
async function exportedStory() {
  const { g, gateKey, trustFile } = await signingGateRun();
  await consentedThenStoppedAndAbandoned(g);
  const out = path.join(makeRunTempDir("gate-attack-"), "bundle");
  const ex = await runCli(["export", g.runFile, "--out", out, "--home", g.home]);
  expect(ex.code, ex.output).toBe(0);
  const keptTrust = path.join(makeRunTempDir("gate-trust-"), "trust.json");
  writeFileSync(keptTrust, readFileSync(path.join(out, "trust.json")));
  const genuine = JSON.parse(readFileSync(path.join(out, "run.json"), "utf8")) as RunFile;
  return { g, gateKey, trustFile, out, keptTrust, genuine };
}

/** Write a run file beside the run's handoff folder (so only what differs is judged), returning its path. */
function writeBeside(dir: string, name: string, file: RunFile): string {
  const p = path.join(dir, name);
  writeFileSync(p, `${JSON.stringify(file, null, 1)}\n`);
  return p;
}

/** The run as twinlock wrote runs before gates signed: no head signature, no record signature, the chain re-hashed. */
function asBeforeGateSignatures(file: RunFile): RunFile {
  const events: RunFile["events"] = [];
  let prev = file.events[0]?.prev as string;
  for (const e of file.events) {
    const { gate: _g, ...rest } = e;
    const event = { ...rest, prev };
    events.push(event);
    prev = hashEvent(event);
  }
  return { format: file.format, revision: file.revision, head: prev, state: replayEvents(events), events };
}

describe("an export the agent rebuilt from genuine receipts (no stop, an admission the gate never made, closed verified)", () => {
  it("is a chain every check but the gate's signature accepts: it replays, and each person's receipt in it is genuine", async () => {
    const { genuine } = await exportedStory();
    const rebuilt = rebuildWithoutTheStop(genuine);
    expect(verifyRunFile(rebuilt).ok).toBe(true);
    expect(rebuilt.state.workflows["MD-29"]?.result?.outcome).toBe("verified");
    expect(rebuilt.state.stops).toEqual([]);
  });

  it("is refused by verify on the gate check (the head signature is not for this head) and on its verified close, which no person signed", async () => {
    const { g, trustFile, genuine } = await exportedStory();
    const file = writeBeside(g.dir, "rebuilt.json", rebuildWithoutTheStop(genuine));
    const r = await runCli(["verify", file, "--trust", trustFile]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}gate {2}run: gate-signature-invalid: run run_[0-9a-f]{16}'s head signature does not verify/);
    expect(r.stdout.split("\n").filter((l) => l.startsWith("FAIL"))).toEqual([
      expect.stringMatching(/^FAIL {2}gate {2}run: gate-signature-invalid/),
      "FAIL  outcome  MD-29→MD-30: closed verified without a verification receipt signed by a person with the verify right",
    ]);
  });

  it("is refused by verify-attestation: an admission attestation of it, signed by a trusted attester, is held against a run no trusted gate signed", async () => {
    const { g, trustFile, genuine } = await exportedStory();
    const rebuilt = rebuildWithoutTheStop(genuine);
    const runFile = writeBeside(g.dir, "rebuilt.json", rebuilt);
    const attester = createPrivateKey(generateReviewerKey().privatePem);
    const dir = makeRunTempDir("gate-attest-");
    const pub = path.join(dir, "attester.pub");
    writeFileSync(pub, `${publicKeyLine(attester)}\n`);
    const admission = attestationsOf(rebuilt, attester, publicKeyLine(attester)).find((a) => a.kind === "admission");
    expect(admission).toBeDefined();
    const env = path.join(dir, "admission.intoto.json");
    writeFileSync(env, JSON.stringify(admission?.envelope));
    const r = await runCli(["verify-attestation", env, "--run", runFile, "--attester", pub, "--trust", trustFile]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^twinlock: verify-attestation refused \(gate signature of --run .*: run run_[0-9a-f]{16}'s head signature does not verify/,
    );
  });

  it("is refused by verify-receipts --exported against the trust.json its gate exported", async () => {
    const { out, keptTrust, genuine } = await exportedStory();
    writeFileSync(path.join(out, "run.json"), JSON.stringify(rebuildWithoutTheStop(genuine)));
    const r = await runCli(["verify-receipts", "--exported", path.join(out, "run.json"), "--trust", keptTrust]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/verify-receipts refused \(gate signature; .*head signature does not verify/);
  });

  it("is refused when the agent signs it with a gate key of its own (its own home's): that gate is not pinned", async () => {
    const { g, trustFile, genuine } = await exportedStory();
    const agentsGate = await ensureGateKey(openGateHome(path.join(makeRunTempDir("agent-home-"), "home"), { create: true }));
    const rebuilt = rebuildWithoutTheStop(genuine);
    const file = writeBeside(g.dir, "rebuilt.json", { ...rebuilt, gate_signature: signHead(rebuilt, agentsGate, "export") });
    const r = await runCli(["verify", file, "--trust", trustFile]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}gate {2}run: gate-key-untrusted: run run_[0-9a-f]{16}'s head is signed by gate key ed25519:/);
  });
});

describe("the gate signatures of a genuine export", () => {
  it("verify accepts a genuine export of a trusted gate, naming the gate that signed its head", async () => {
    const { g, trustFile, genuine } = await exportedStory();
    const file = writeBeside(g.dir, "exported.json", genuine);
    const r = await runCli(["verify", file, "--trust", trustFile]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toMatch(/ok {4}gate {2}run: head signed by trusted gate ed25519:.*and its 1 gate record by trusted gates/);
  });

  it("refuses a tampered head signature (one byte of it changed)", async () => {
    const { g, trustFile, genuine } = await exportedStory();
    const sig = genuine.gate_signature as NonNullable<RunFile["gate_signature"]>;
    const bytes = Buffer.from(sig.value, "base64");
    bytes[5] = (bytes[5] as number) ^ 1;
    const file = writeBeside(g.dir, "tampered.json", { ...genuine, gate_signature: { ...sig, value: bytes.toString("base64") } });
    const r = await runCli(["verify", file, "--trust", trustFile]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}gate {2}run: gate-signature-invalid/);
  });

  it("refuses a head signature by another gate's key, though that gate is a real one", async () => {
    const { g, trustFile, genuine } = await exportedStory();
    const other = await ensureGateKey(openGateHome(path.join(makeRunTempDir("other-gate-"), "home"), { create: true }));
    const file = writeBeside(g.dir, "other.json", { ...genuine, gate_signature: signHead(genuine, other, "export") });
    const r = await runCli(["verify", file, "--trust", trustFile]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}gate {2}run: gate-key-untrusted/);
  });

  it("refuses a stripped head signature, and a gate record whose signature was stripped", async () => {
    const { g, trustFile, genuine } = await exportedStory();
    const { gate_signature: _s, ...noHead } = genuine;
    const head = await runCli(["verify", writeBeside(g.dir, "nohead.json", noHead), "--trust", trustFile]);
    expect(head.code).toBe(1);
    expect(head.stdout).toMatch(/FAIL {2}gate {2}run: gate-head-unsigned/);
    const closed = genuine.events.findIndex((e) => e.type === "closed");
    const events = genuine.events.map((e, i) => (i === closed ? { ...e, gate: undefined } : e));
    const verdict = judgeGateSignatures(
      { ...genuine, events: events.map(({ gate, ...e }) => (gate ? { ...e, gate } : e)) },
      new Set([genuine.gate_signature?.gate_key as string]),
    );
    expect(verdict).toMatchObject({ ok: false, seq: closed + 1 });
  });

  it("refuses an export made before gates signed, in one line that says how to export it again", async () => {
    const { g, trustFile, out, keptTrust, genuine } = await exportedStory();
    const old = asBeforeGateSignatures(genuine);
    const v = await runCli(["verify", writeBeside(g.dir, "old.json", old), "--trust", trustFile]);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(
      /FAIL {2}gate {2}run: gate-unsigned-export: .*export it again with `twinlock export RUN --out DIR` from the gate home that made it, after pinning that gate's key \(`twinlock trust gate-key` there\)/,
    );
    writeFileSync(path.join(out, "run.json"), JSON.stringify(old));
    const r = await runCli(["verify-receipts", "--exported", path.join(out, "run.json"), "--trust", keptTrust]);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/export it again with `twinlock export RUN --out DIR` from the gate home that made it/);
  });
});

describe("what the gate signs as it records", () => {
  it("signs each admission and close it records over that event, and each head it writes, in the run file and in its checkpoint", async () => {
    const g = makeGateRun();
    await driveTo(g, "closed", { closedVia: "verified" });
    const home = homeOf(g);
    const gate = await ensureGateKey(home);
    const file = readRunFile(g.runFile).file;
    const records = file.events.filter((e) => e.type === "admitted" || e.type === "closed");
    expect(records.map((e) => e.type)).toEqual(["admitted", "closed"]);
    for (const e of records) {
      expect(e.gate?.gate_key).toBe(gate.publicKey);
      expect(verifyGateStatement(e.gate as GateSignature, e.type as GateStatementKind, file.state.run_id, e.seq, gateRecordHash(e))).toBe(
        true,
      );
    }
    // A person's decision is the person's to sign: the gate adds nothing to it.
    expect(file.events.filter((e) => e.type === "consent_granted" || e.type === "plan_approved").every((e) => e.gate === undefined)).toBe(
      true,
    );
    expect(file.gate_signature).toMatchObject({ kind: "checkpoint", gate_key: gate.publicKey });
    expect(verifyGateStatement(file.gate_signature as GateSignature, "checkpoint", file.state.run_id, file.revision, file.head)).toBe(true);
    expect(readCheckpoint(home, file.state.run_id)?.gate_signature).toEqual(file.gate_signature);
    expect(judgeGateSignatures(file, new Set([gate.publicKey]))).toMatchObject({ ok: true, records: 2 });
  });

  it("signs the exec result it records in the home", async () => {
    const home = openGateHome(path.join(makeRunTempDir("exec-home-"), "home"), { create: true });
    const gate = await ensureGateKey(home);
    const written = recordExecResult(home, {
      format: "twinlock-exec-result/1",
      run_id: "run_0123456789abcdef",
      planner: "MD-29",
      executor: "MD-30",
      handoff_hash: `sha256:${"a".repeat(64)}`,
      command: ["make", "test"],
      status: 0,
      started_at: "2026-01-01T00:00:00.000Z",
      ended_at: "2026-01-01T00:01:00.000Z",
    });
    const { gate_signature, ...result } = JSON.parse(readFileSync(written, "utf8"));
    expect(gate_signature.gate_key).toBe(gate.publicKey);
    expect(verifyGateStatement(gate_signature, "exec_result", result.run_id, 0, hashCanonical(result))).toBe(true);
    expect(verifyGateStatement(gate_signature, "exec_result", result.run_id, 0, hashCanonical({ ...result, status: 1 }))).toBe(false);
  });
});

describe("the gate's signed statement", () => {
  const gate = (() => {
    const key = createPrivateKey(generateReviewerKey().privatePem);
    return { privateKey: key, publicKey: publicKeyLine(key) };
  })();
  const other = publicKeyLine(createPrivateKey(generateReviewerKey().privatePem));
  const kinds: GateStatementKind[] = ["checkpoint", "export", "admitted", "dry_run_admitted", "closed", "failed", "exec_result"];
  const statement = fc.record({
    kind: fc.constantFrom(...kinds),
    run: fc.stringMatching(/^run_[0-9a-f]{16}$/),
    seq: fc.nat({ max: 1_000_000 }),
    head: fc.stringMatching(/^sha256:[0-9a-f]{64}$/),
  });

  it("verifies as signed, and fails when any one field (kind, gate key, run, seq or head) is changed", () => {
    fc.assert(
      fc.property(statement, statement, fc.constantFrom("kind", "gate_key", "run", "seq", "head"), (s, t, field) => {
        const sig = signGateStatement(gate, s.kind, s.run, s.seq, s.head);
        expect(verifyGateStatement(sig, s.kind, s.run, s.seq, s.head)).toBe(true);
        const changed = { ...s, [field]: field === "seq" ? (t.seq === s.seq ? s.seq + 1 : t.seq) : (t as Record<string, unknown>)[field] };
        if (field === "gate_key") return !verifyGateStatement({ ...sig, gate_key: other }, s.kind, s.run, s.seq, s.head);
        fc.pre(changed[field as keyof typeof changed] !== s[field as keyof typeof s]);
        return !verifyGateStatement(sig, changed.kind, changed.run, changed.seq, changed.head);
      }),
      { numRuns: 200 },
    );
  });
});
