import { createPrivateKey, type KeyObject } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseDocument } from "yaml";
import { closeWorkflow } from "../gate/close-workflow.js";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { raiseStop } from "../gate/hard-stops.js";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { pinSuite } from "../home/suite-pins.js";
import { replayEvents } from "../run/apply-event.js";
import { hashEvent } from "../run/event-chain.js";
import { receiptHash } from "../run/receipt-hash.js";
import { RUN_FORMAT, type RunFile } from "../run/run-schema.js";
import { appendTo } from "../store/run-file.js";
import { ensureGateKey } from "../trust/gate-key.js";
import { generateReviewerKey, publicKeyLine } from "../trust/keys.js";
import { freeze, frozenHash, type GateRun, homeOf, makeGateRun, PLANNER, startRun, storeOf, TEST_PINNER } from "./run-fixture.js";
import { ALICE_KEY } from "./signed-run.js";

/** The planner agent's key with the freeze right, for signing suites. */
export const FREEZER: KeyObject = createPrivateKey(generateReviewerKey().privatePem);

/**
 * A run of a signing suite (alice reviews and consents, the planner's key
 * freezes) in the test file's gate home, whose twinlock.yaml pins that home's
 * gate key and any `extraGateKeys` in `gate_keys:`; the suite is pinned.
 */
export async function signingGateRun(extraGateKeys: string[] = []): Promise<{ g: GateRun; gateKey: string; trustFile: string }> {
  const g = makeGateRun({ copySuite: true });
  const gateKey = (await ensureGateKey(homeOf(g))).publicKey;
  const trustFile = path.join(g.suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(trustFile, "utf8"));
  doc.setIn(["policies", "require_signed_receipts"], true);
  doc.set("reviewers", [
    { name: "alice", public_key: publicKeyLine(ALICE_KEY), rights: ["review", "consent", "apply", "stop", "verify"] },
    { name: "planner-agent", public_key: publicKeyLine(FREEZER), rights: ["freeze"] },
  ]);
  doc.set(
    "gate_keys",
    [gateKey, ...extraGateKeys].map((k, i) => ({ name: `gate-${i}`, public_key: k })),
  );
  writeFileSync(trustFile, doc.toString());
  await pinSuite(homeOf(g), { suiteDir: g.suite, key: TEST_PINNER });
  return { g, gateKey, trustFile };
}

/** Freeze (signed), alice's signed approval and consent: the pair is `dry_run_ready`. */
export async function consentSigned(g: GateRun): Promise<void> {
  await startRun(g);
  await freeze(g, { key: FREEZER });
  const store = storeOf(g);
  const handoffHash = frozenHash(g);
  await reviewPairPlan({ run: g.runFile, store, planner: PLANNER, decision: "approved", handoffHash, reviewer: "alice", key: ALICE_KEY });
  await consentPairExecution({ run: g.runFile, store, planner: PLANNER, approve: true, handoffHash, user: "alice", key: ALICE_KEY });
}

/** The story: a person consented, then raised a stop and closed the pair abandoned. */
export async function consentedThenStoppedAndAbandoned(g: GateRun): Promise<void> {
  await consentSigned(g);
  const store = storeOf(g);
  await raiseStop({ store, run: g.runFile, reason: "wrong-target", workflow: PLANNER, actor: "alice" });
  await closeWorkflow({ store, run: g.runFile, planner: PLANNER, result: "abandoned", residual: "stopped by alice", actor: "alice" });
}

/**
 * What the agent makes of that run's export with twinlock's own functions:
 * the chain up to the consent (every human receipt genuine), then an
 * admission the gate never made and a close `verified`; no stop. The head
 * signature it came with is kept (it is for another head), as an agent that
 * edits only what it must would.
 */
export function rebuildWithoutTheStop(genuine: RunFile): RunFile {
  const cut = genuine.events.findIndex((e) => e.type === "stop_raised");
  const kept = genuine.events.slice(0, cut);
  const prefix: RunFile = {
    format: RUN_FORMAT,
    revision: kept.length,
    head: hashEvent(kept[kept.length - 1] as RunFile["events"][number]),
    state: replayEvents(kept),
    events: kept,
  };
  const wf = prefix.state.workflows[PLANNER];
  const consent = wf?.consents[wf.consents.length - 1];
  if (!wf?.handoff || !consent) throw new Error("the genuine run has no consent to rebuild on");
  const at = new Date(Date.parse(consent.at) + 60_000);
  const admission = {
    kind: "admission",
    run_id: prefix.state.run_id,
    planner: wf.planner,
    executor: wf.executor,
    handoff_hash: wf.handoff.hash,
    revision: wf.revision,
    consent_hash: receiptHash(consent),
    requested: {
      mode: consent.mode,
      environment: consent.environment,
      actions: consent.actions === "all" ? [] : consent.actions,
      budget: consent.budget,
    },
    checks: [{ id: "exact-twin", name: "exact twin", ok: true, detail: "MD-30 is MD-29's reciprocal twin" }],
    actor: "gate",
    at: at.toISOString(),
  };
  const rebuilt = appendTo(
    prefix,
    [
      { type: "admitted", actor: "gate", data: { planner: wf.planner, receipt: admission } },
      { type: "closed", actor: "executor-agent", data: { planner: wf.planner, outcome: "verified", residual: "none" } },
    ],
    at,
  );
  return genuine.gate_signature ? { ...rebuilt, gate_signature: genuine.gate_signature } : rebuilt;
}
