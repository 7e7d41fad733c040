import { afterEach, describe, expect, it } from "vitest";
import { updateRun } from "../home/run-ledger.js";
import { createAgentToken } from "../server/agent-tokens.js";
import {
  apiOf,
  call,
  decide,
  hashNow,
  PLANNER,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
} from "../test-support/gate-server-fixture.js";
import { mcpClientFor } from "../test-support/mcp-client.js";
import { waitForDecision } from "./wait-for-decision.js";

afterEach(() => removeServerWorlds());

async function frozen(w: ServerWorld) {
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
  expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
  return token;
}

type WaitAnswer = {
  status: string;
  state: string;
  decision?: { decision: string; feedback: string | null; revision: number; reviewer: string };
};

describe("the agent's wait for a decision (MCP twinlock_wait_for_review, waitForDecision)", () => {
  it("returns changes_requested with the reviewer's feedback as soon as the reviewer decides, without the agent polling", async () => {
    const w = await serverWorld();
    const token = await frozen(w);
    const client = await mcpClientFor(w, token);
    try {
      const waiting = client.callTool({
        name: "twinlock_wait_for_review",
        arguments: { planner: PLANNER, revision: 1, timeout_seconds: 60 },
      });
      const reviewer = await reviewerFor(w, "rita");
      const feedback = "Name the rollback for A2, and who runs it.";
      expect(
        (await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback })).status,
      ).toBe(200);
      const r = await waiting;
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      const data = r.structuredContent as WaitAnswer;
      expect(data).toMatchObject({ status: "decided", state: "plan_revision_pending" });
      expect(data.decision).toMatchObject({ decision: "changes_requested", feedback, revision: 1, reviewer: "rita" });
      expect((r.content as Array<{ text: string }>)[0]?.text).toContain(feedback);
    } finally {
      await client.close();
    }
  });

  it("returns the reviewer's comments by item on changes_requested, as data and in its text", async () => {
    const w = await serverWorld();
    const token = await frozen(w);
    const client = await mcpClientFor(w, token);
    try {
      const reviewer = await reviewerFor(w, "rita");
      const comments = [
        { item: "A2", text: "Who runs the rollback?" },
        { item: "report.md:1", text: "The title overstates the risk." },
      ];
      const decided = await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", comments });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      const r = await client.callTool({
        name: "twinlock_wait_for_review",
        arguments: { planner: PLANNER, revision: 1, timeout_seconds: 5 },
      });
      const data = r.structuredContent as WaitAnswer & { decision: { comments: unknown[] } };
      expect(data.decision.comments).toEqual([
        { item: "A2", kind: "action", text: "Who runs the rollback?" },
        { item: "report.md:1", kind: "file", text: "The title overstates the risk." },
      ]);
      const text = (r.content as Array<{ text: string }>)[0]?.text ?? "";
      expect(text).toContain("A2 (action): Who runs the rollback?");
      expect(text).toContain("report.md:1 (file): The title overstates the risk.");
    } finally {
      await client.close();
    }
  });

  it("answers 'waiting' when the time runs out with no decision, and never decides anything itself", async () => {
    const w = await serverWorld();
    const token = await frozen(w);
    const client = await mcpClientFor(w, token);
    try {
      const r = await client.callTool({ name: "twinlock_wait_for_review", arguments: { planner: PLANNER, timeout_seconds: 1 } });
      expect(r.structuredContent).toMatchObject({ status: "waiting", state: "plan_review_pending", revision: 1 });
      expect((await w.store.read(w.runFile)).state.workflows[PLANNER]?.reviews).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("tells an agent that waits before anything is frozen (say its submit was refused) that nothing was frozen, coded NOT_FROZEN, not to give another revision", async () => {
    const w = await serverWorld();
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    const client = await mcpClientFor(w, token);
    try {
      const r = await client.callTool({ name: "twinlock_wait_for_review", arguments: { planner: PLANNER, timeout_seconds: 1 } });
      expect(r.isError).toBe(true);
      const text = (r.content as Array<{ text: string }>)[0]?.text ?? "";
      expect(text).toMatch(/^NOT_FROZEN/);
      expect(text).toMatch(/nothing of .* is frozen yet/);
      expect(text).not.toMatch(/give the revision you froze/);
    } finally {
      await client.close();
    }
    await expect(waitForDecision(w.store, w.runFile, PLANNER, 1, undefined, { timeoutMs: 0 })).rejects.toMatchObject({
      code: "NOT_FROZEN",
    });
  });

  it("counts an approval only once the plan is approved, and not a decision on an earlier revision", async () => {
    const w = await serverWorld();
    await frozen(w);
    const reviewer = await reviewerFor(w, "rita");
    await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "approved" });
    const r = await waitForDecision(w.store, w.runFile, PLANNER, 1, undefined, { timeoutMs: 0 });
    expect(r).toMatchObject({ status: "decided", state: "execution_consent_pending", decision: { decision: "approved", revision: 1 } });
    await expect(waitForDecision(w.store, w.runFile, PLANNER, 2, undefined, { timeoutMs: 0 })).rejects.toThrow(/has no revision 2 yet/);
  });

  it("sees what another process recorded (no ring in this process) by reading the store again, with the stops that hold the pair", async () => {
    const w = await serverWorld();
    await frozen(w);
    const waiting = waitForDecision(w.store, w.runFile, PLANNER, 1, undefined, { timeoutMs: 60_000, pollMs: 50 });
    // As another process would: straight to the ledger, past this process's stores (and so its ring).
    const elsewhere = (type: string, data: Record<string, unknown>) =>
      updateRun(w.runFile, w.home, () => ({ events: [{ type: type as never, actor: "elsewhere", data }], result: undefined }));
    await elsewhere("stop_raised", { reason: "halt", workflow: null, note: null });
    await elsewhere("failed", { planner: PLANNER, residual: "abandoned by its operator" });
    const r = await waiting;
    expect(r).toMatchObject({ status: "finished", state: "failed" });
    expect(r.stops.map((s) => s.reason)).toEqual(["halt"]);
  });

  it("refuses a token without the status scope, and a token for another pair (attack: learn another pair's decisions)", async () => {
    const w = await serverWorld();
    const { token } = await createAgentToken(w.home, { agent: "a", runId: w.runId, scopes: ["freeze"] });
    const client = await mcpClientFor(w, token);
    try {
      const r = await client.callTool({ name: "twinlock_wait_for_review", arguments: { planner: PLANNER, timeout_seconds: 1 } });
      expect(r.isError).toBe(true);
      expect((r.content as Array<{ text: string }>)[0]?.text).toMatch(/^TOKEN_SCOPE/);
      const other = await client.callTool({ name: "twinlock_wait_for_review", arguments: { planner: "MD-99", timeout_seconds: 1 } });
      expect(other.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
