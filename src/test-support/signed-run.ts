import { createPrivateKey, type KeyObject } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { approveApply } from "../gate/approve-apply.js";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { generateReviewerKey, publicKeyLine } from "../trust/keys.js";
import { admitStep, freeze, frozenHash, type GateRun, PLANNER, type RunSettings, startRun, storeOf } from "./run-fixture.js";

/** A reviewer's key for tests: alice reviews and consents. */
export const ALICE_KEY: KeyObject = createPrivateKey(generateReviewerKey().privatePem);

/** Another person's key: one that is in no trust file. */
export const MALLORY_KEY: KeyObject = createPrivateKey(generateReviewerKey().privatePem);

/**
 * Drive the fixture run to `executing` with alice's signed review and consent
 * (and apply approval; the unsigned example suite accepts a signature by a key it does not list;
 * the trust file of a test is what names alice). `freezeKey` signs the freeze, for a suite that requires it.
 */
export async function driveSignedToExecuting(
  g: GateRun,
  s: RunSettings = {},
  o: { freezeKey?: KeyObject; beforeAdmission?: () => Promise<void> } = {},
): Promise<void> {
  await startRun(g, s);
  await driveSignedPairToExecuting(g, { ...o, apply: s.mode === "APPLY_APPROVED" });
}

/**
 * Drive one pair of a started run to `executing`: freeze its handoff
 * (`handoff`, default the fixture's), alice's signed review and consent (and
 * apply approval with `apply`), and the admission of its executor.
 */
export async function driveSignedPairToExecuting(
  g: GateRun,
  o: {
    planner?: string;
    executor?: string;
    handoff?: string;
    apply?: boolean;
    freezeKey?: KeyObject;
    beforeAdmission?: () => Promise<void>;
  } = {},
): Promise<void> {
  const planner = o.planner ?? PLANNER;
  await freeze(g, { planner, handoff: o.handoff, key: o.freezeKey });
  const store = storeOf(g);
  const handoffHash = frozenHash(g, planner);
  await reviewPairPlan({ run: g.runFile, store, planner, decision: "approved", handoffHash, reviewer: "alice", key: ALICE_KEY });
  await consentPairExecution({ run: g.runFile, store, planner, approve: true, handoffHash, user: "alice", key: ALICE_KEY });
  if (o.apply) await approveApply({ run: g.runFile, store, planner, approver: "alice", key: ALICE_KEY });
  await o.beforeAdmission?.();
  const r = await admitStep(g, { planner, executor: o.executor });
  if (!r.admitted) throw new Error(`fixture admission failed: ${JSON.stringify(r.checks.filter((c) => !c.ok))}`);
}

/** alice's key as a private key file (0600) in `dir`, for the CLI's `--key`; its path. */
export function aliceKeyFile(dir: string, key: KeyObject = ALICE_KEY): string {
  const file = path.join(dir, "alice.key");
  writeFileSync(file, key.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  return file;
}

/** A twinlock.yaml-shaped trust file naming alice's key with the review, consent, apply and verify rights, and the gates it trusts. */
export function aliceTrustFile(key: KeyObject = ALICE_KEY, gateKeys: readonly string[] = []): string {
  const gates = gateKeys.map((k, i) => `  - name: gate-${i}\n    public_key: "${k}"\n`).join("");
  return `reviewers:\n  - name: alice\n    public_key: "${publicKeyLine(key)}"\n    rights: [review, consent, apply, verify]\n${gates ? `gate_keys:\n${gates}` : ""}`;
}
