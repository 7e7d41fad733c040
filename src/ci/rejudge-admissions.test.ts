import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { raiseStop, resolveStop } from "../gate/hard-stops.js";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { ADMISSION_CHECKS } from "../run/admission/admission-check-registry.js";
import type { AdmissionCheckModule } from "../run/admission/admission-facts.js";
import { receiptHash } from "../run/receipt-hash.js";
import type { AdmissionReceipt, RunFile } from "../run/run-schema.js";
import { appendTo, readRunFile, serializeRunFile } from "../store/run-file.js";
import {
  EXECUTOR,
  freeze,
  frozenHash,
  type GateRun,
  homeOf,
  makeGateRun,
  PLANNER,
  removeGateRuns,
  startRun,
  storeOf,
} from "../test-support/run-fixture.js";
import { ALICE_KEY, aliceTrustFile } from "../test-support/signed-run.js";
import { ensureGateKey } from "../trust/gate-key.js";
import { readTrustFile } from "./read-trust-file.js";
import { type VerifyReport, verifyRun } from "./verify-run.js";

afterAll(removeGateRuns);

/** A run with alice's signed review and consent, not admitted: the gate's record before the executor may start. */
async function consentedRun(o: { expiresInMs?: number; now?: Date } = {}): Promise<GateRun> {
  const g = makeGateRun();
  await startRun(g);
  await freeze(g);
  const common = { run: g.runFile, store: storeOf(g), planner: PLANNER, handoffHash: frozenHash(g), key: ALICE_KEY };
  await reviewPairPlan({ ...common, decision: "approved", reviewer: "alice" });
  await consentPairExecution({ ...common, approve: true, user: "alice", expiresInMs: o.expiresInMs, now: o.now && (() => o.now as Date) });
  return g;
}

/** The admission an agent writes by hand: every check "passed", bound to the run's current consent. */
function handMadeAdmission(file: RunFile, at: Date): AdmissionReceipt {
  const wf = file.state.workflows[PLANNER];
  const consent = wf?.consents[wf.consents.length - 1];
  if (!wf?.handoff || !consent) throw new Error("fixture: no frozen handoff or consent");
  return {
    kind: "admission",
    run_id: file.state.run_id,
    planner: PLANNER,
    executor: EXECUTOR,
    handoff_hash: wf.handoff.hash,
    revision: wf.handoff.revision,
    consent_hash: receiptHash(consent),
    requested: { mode: consent.mode, environment: consent.environment, actions: ["1"], budget: consent.budget },
    checks: [{ id: "8", name: "no unresolved !STOP on the run or the workflow", ok: true, detail: "none" }],
    actor: "executor-agent",
    at: at.toISOString(),
  };
}

/** Write a copy of the run with the agent's events appended (the chain rebuilt by `appendTo`), and verify it as CI would. */
async function verifyForged(g: GateRun, file: RunFile, at = new Date()): Promise<VerifyReport> {
  const forged = appendTo(
    file,
    [{ type: "admitted", actor: "executor-agent", data: { planner: PLANNER, receipt: handMadeAdmission(file, at) } }],
    at,
  );
  const copy = path.join(g.dir, "forged-run.json");
  writeFileSync(copy, serializeRunFile(forged));
  return verifyAsCi(g, copy);
}

async function verifyAsCi(g: GateRun, runFile: string): Promise<VerifyReport> {
  const trustFile = path.join(g.dir, "trust.yaml");
  writeFileSync(trustFile, aliceTrustFile(ALICE_KEY, [(await ensureGateKey(homeOf(g))).publicKey]));
  return verifyRun({ runFile, trust: readTrustFile({ file: trustFile, cwd: g.dir }), root: g.dir });
}

const admissionOf = (r: VerifyReport) => r.findings.find((f) => f.check === "admission");

describe("twinlock verify re-judges the admission from the run's own facts", () => {
  it("refuses a hand-made admission appended to a copy while a !STOP is open", async () => {
    const g = await consentedRun();
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "prod-incident", actor: "oncall" });
    const r = await verifyForged(g, readRunFile(g.runFile).file);
    expect(r.ok).toBe(false);
    expect(admissionOf(r)?.message).toMatch(/admission at event \d+: !STOP:prod-incident was unresolved at the admission/);
  });

  it("refuses a stop the agent lifted with its own unsigned resolution before admitting itself", async () => {
    const g = await consentedRun();
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "prod-incident", actor: "oncall" });
    await resolveStop({ store: storeOf(g), run: g.runFile, reason: "prod-incident", note: "looks fine to me", actor: "executor-agent" });
    const r = await verifyForged(g, readRunFile(g.runFile).file);
    expect(r.ok).toBe(false);
    expect(admissionOf(r)?.message).toMatch(/!STOP:prod-incident was lifted without a trusted signature/);
  });

  it("refuses an admission recorded after the consent expired", async () => {
    const t0 = new Date();
    const g = await consentedRun({ expiresInMs: 60_000, now: t0 });
    const r = await verifyForged(g, readRunFile(g.runFile).file, new Date(t0.getTime() + 120_000));
    expect(r.ok).toBe(false);
    expect(admissionOf(r)?.message).toMatch(/the consent expired at .*, before the admission at/);
  });

  it("accepts the same hand-made admission when every recorded fact allows it (what the gate itself would have admitted), yet refuses the run: the gate never signed that admission", async () => {
    const g = await consentedRun();
    const r = await verifyForged(g, readRunFile(g.runFile).file);
    expect(admissionOf(r)).toMatchObject({ ok: true });
    expect(r.ok).toBe(false);
    expect(r.findings.find((f) => f.check === "gate")?.message).toMatch(
      /^gate-unsigned-export: run run_[0-9a-f]{16} carries no gate signature/,
    );
  });

  it("sees through a stop whose event was removed and the whole chain rebuilt: the admission re-judges fine, but no trusted gate signed that chain", async () => {
    const g = await consentedRun();
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "prod-incident", actor: "oncall" });
    const gate = readRunFile(g.runFile).file;
    const rebuilt = appendTo(
      undefined,
      gate.events.filter((e) => e.type !== "stop_raised").map((e) => ({ type: e.type, actor: e.actor, data: e.data })),
      new Date(),
    );
    // The rebuilt copy is self-consistent, so its admission re-judges fine; the gate's signature is what it lacks.
    const forged = await verifyForged(g, rebuilt);
    expect(admissionOf(forged)).toMatchObject({ ok: true });
    expect(forged.ok).toBe(false);
    expect(forged.findings.find((f) => f.check === "gate")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^gate-unsigned-export: /),
    });
    const fromGate = await verifyAsCi(g, g.runFile);
    expect(admissionOf(fromGate)?.message).toMatch(/^not executed/);
    expect(fromGate.findings.find((f) => f.check === "gate")).toMatchObject({ ok: true });
    expect(gate.head).not.toBe(rebuilt.head);
  });

  it("hears a check added to ADMISSION_CHECKS with a re-judgement, with no change to CI's re-judging", async () => {
    const g = await consentedRun();
    const rows = ADMISSION_CHECKS as AdmissionCheckModule[];
    const toy: AdmissionCheckModule = {
      id: "toy",
      name: "a toy check",
      reads: [],
      judge: () => ({ ok: true, detail: "" }),
      rejudge: (r) => [`the toy re-judged ${r.receipt.executor}`],
    };
    rows.push(toy);
    try {
      const r = await verifyForged(g, readRunFile(g.runFile).file);
      expect(admissionOf(r)?.message).toMatch(`the toy re-judged ${EXECUTOR}`);
    } finally {
      rows.splice(rows.indexOf(toy), 1);
    }
  });
});
