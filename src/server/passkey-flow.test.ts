/**
 * The whole review in node, as the browser and the agent would do it: a
 * person is invited from the terminal, enrols a passkey through the
 * server, signs in; the agent freezes with its token; the person requests
 * changes, the agent re-freezes, the person approves the current hash and
 * consents, each decision signed by the passkey over the receipt; then
 * admission admits and verify-receipts verifies the passkey receipts
 * offline. Once on a suite pinned with --allow-unsigned, once on a suite
 * that requires signed receipts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runVerifyReceipts } from "../cli/commands/verify-receipts.js";
import { admit } from "../gate/admit.js";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { revokeReviewer } from "../passkey/reviewer-registry.js";
import {
  apiOf,
  call,
  decide,
  EXECUTOR,
  editReport,
  hashNow,
  jsonOf,
  PLANNER,
  type Reviewer,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
  workflowNow,
} from "../test-support/gate-server-fixture.js";
import { createAgentToken } from "./agent-tokens.js";

afterEach(removeServerWorlds);

/** The agent freezes: with its token through the API, or (signing suites) with its freeze key as the CLI does. */
async function agentFreezes(w: ServerWorld, token: string, first: boolean): Promise<void> {
  if (w.signing) {
    await freezePairHandoff({ store: w.store, run: w.runFile, planner: PLANNER, handoffDir: w.handoff, key: w.plannerKey });
    return;
  }
  const r = await jsonOf(await call(w, apiOf(w).freeze, { token, json: first ? { handoff_dir: w.handoff } : {} }));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.state).toBe("plan_review_pending");
  expect(r.body.review_url).toBe(`http://localhost:7420/runs/${w.runId}/pairs/${PLANNER}/revisions/${r.body.revision}`);
}

/** Invite, enrol, sign in, freeze, request changes, re-freeze, approve, consent: the run is ready to admit. */
async function reviewToConsent(w: ServerWorld): Promise<{ alice: Reviewer; token: string }> {
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
  const alice = await reviewerFor(w, "alice");
  await agentFreezes(w, token, true);
  const firstHash = hashNow(w);

  const changes = await decide(w, alice, apiOf(w).review, {
    handoff_hash: firstHash,
    decision: "changes_requested",
    feedback: "Add Windows coverage",
  });
  expect(changes.status, JSON.stringify(changes.body)).toBe(200);
  expect(changes.body.state).toBe("plan_revision_pending");
  expect((changes.body.receipt as { signature: { kind: string } }).signature.kind).toBe("webauthn");

  editReport(w, "Windows coverage added.");
  await agentFreezes(w, token, false);
  expect(workflowNow(w).revision).toBe(2);

  const approved = await decide(w, alice, apiOf(w).review, { handoff_hash: hashNow(w), decision: "approved" });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  expect(approved.body.state).toBe("execution_consent_pending");

  const consented = await decide(w, alice, apiOf(w).consent, {
    handoff_hash: hashNow(w),
    approve: true,
    mode: "APPLY_SAFE",
    environment: "staging",
  });
  expect(consented.status, JSON.stringify(consented.body)).toBe(200);
  expect(consented.body.state).toBe("dry_run_ready");
  return { alice, token };
}

for (const signing of [false, true]) {
  describe(signing ? "on a suite that requires signed receipts" : "on a suite pinned with --allow-unsigned", () => {
    it("admits after a review and consent signed with a passkey in the server, and verify-receipts verifies every passkey receipt", async () => {
      const w = await serverWorld({ signing });
      const { token } = await reviewToConsent(w);

      const check = await jsonOf(await call(w, apiOf(w).admission, { token, json: {} }));
      expect(check.body.would_admit, JSON.stringify(check.body.checks)).toBe(true);

      const admitted = await admit({ store: w.store, run: w.runFile, executor: EXECUTOR, actor: "executor-agent" });
      expect(admitted.admitted, JSON.stringify(admitted.checks.filter((c) => !c.ok))).toBe(true);
      expect(workflowNow(w).state).toBe("executing");

      const verified = await runVerifyReceipts(w.runFile, { home: w.home.dir });
      expect(verified.exitCode, verified.text).toBe(0);
      const rows = (verified.json as { receipts: Array<{ kind: string; person: string; signed: boolean; ok: boolean; detail: string }> })
        .receipts;
      const passkeyRows = rows.filter((r) => r.person === "alice");
      expect(passkeyRows.map((r) => r.kind)).toEqual(["review", "review", "consent"]);
      for (const r of passkeyRows) expect(r).toMatchObject({ signed: true, ok: true, detail: "signed by alice" });
      expect(verified.text.includes("UNSIGNED: receipts prove nothing about who decided")).toBe(!signing);
    });

    it("stops counting a reviewer's passkey receipts at admission once the reviewer is revoked", async () => {
      const w = await serverWorld({ signing });
      await reviewToConsent(w);
      await revokeReviewer(w.home, "alice");
      const r = await admit({ store: w.store, run: w.runFile, executor: EXECUTOR, actor: "executor-agent", dry: true });
      expect(r.admitted).toBe(false);
      expect(r.checks.find((c) => c.id === "T2")).toMatchObject({ ok: false });
      // The home no longer lists a revoked reviewer's passkey, so its receipts name a key no one holds.
      expect(r.checks.find((c) => c.id === "T2")?.detail).toMatch(/not enrolled in this gate home|revoked/);
      expect((await runVerifyReceipts(w.runFile, { home: w.home.dir })).exitCode).toBe(1);
    });
  });
}

describe("an agent's freeze through the API on a signing suite", () => {
  it("is refused as an unsigned freeze, with nothing recorded: the API holds no freeze key", async () => {
    const w = await serverWorld({ signing: true });
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    const r = await jsonOf(await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } }));
    expect([r.status, r.body.code]).toEqual([409, "UNTRUSTED_RECEIPT"]);
    expect(r.body.message).toContain("unsigned");
    expect(workflowNow(w).handoff).toBeNull();
  });
});
