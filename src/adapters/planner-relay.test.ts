import path from "node:path";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, describe, expect, it } from "vitest";
import { startMcpRelay } from "../sandbox/mcp-relay.js";
import { boundPlannerRun, decideWhenFrozen } from "../test-support/adapter-runs.js";
import { PLANNER, removeGateRuns, workflowOf } from "../test-support/run-fixture.js";
import { plannerTools } from "./ai-sdk.js";
import { plannerSession } from "./planner-session.js";

afterAll(removeGateRuns);

const TWINLOCK = path.resolve("bin/twinlock.cjs");
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } } as never;

function scriptedModel(calls: string[]) {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const c = calls[step++];
      return c
        ? {
            content: [{ type: "tool-call", toolCallId: `c${step}`, toolName: c, input: "{}" }],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage,
            warnings: [],
          }
        : { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
    },
  });
}

/** plan's relay as `plan` starts it: its own `twinlock mcp` for the pair's planner and handoff, with no key in its environment. */
async function planRelay(g: { runFile: string; home: string; handoff: string }) {
  const env = { PATH: process.env.PATH };
  return startMcpRelay(
    [process.execPath, TWINLOCK, "mcp", "--run", g.runFile, "--home", g.home, "--planner", PLANNER, "--handoff", g.handoff],
    env,
  );
}

describe("the planner tools under plan's MCP relay", () => {
  it("freeze and wait through the relay, never opening the gate home, and hear a person's decision", async () => {
    const { g, env } = await boundPlannerRun();
    const relay = await planRelay(g);
    try {
      // The home named is not the gate home: had the tools opened a folder store, nothing would be frozen in the run.
      const agentEnv = { ...env, TWINLOCK_MCP_SOCKET: relay.socket };
      const tools = plannerTools({ home: "/nonexistent/twinlock-home", env: agentEnv });
      const agent = generateText({
        model: scriptedModel(["twinlock_submit_handoff", "twinlock_request_review"]),
        prompt: "plan the fix",
        tools,
        stopWhen: stepCountIs(4),
      });
      await decideWhenFrozen(g, "changes_requested", "Add Windows coverage");
      const shown = (await agent).steps.flatMap((s) =>
        s.content.flatMap((c) => (c.type === "tool-result" ? [c.output] : c.type === "tool-error" ? [String(c.error)] : [])),
      );
      expect(shown[0]).toMatchObject({ revision: 1, state: "plan_review_pending" });
      expect(shown[1]).toMatchObject({ decision: "changes_requested", comments: "Add Windows coverage", revision: 1 });
      expect(workflowOf(g).state).toBe("plan_revision_pending");
      expect(Object.keys(agentEnv).filter((k) => /KEY|STORE|PASSWORD/.test(k))).toEqual([]);
    } finally {
      await relay.close();
    }
  });

  it("keeps the direct store path for a caller that passes its store, even with a relay named", async () => {
    const { g, env } = await boundPlannerRun();
    const { storeOf } = await import("../test-support/run-fixture.js");
    const session = plannerSession({ home: g.home, env: { ...env, TWINLOCK_MCP_SOCKET: "/nonexistent/relay.sock" }, store: storeOf(g) });
    await expect(session.submitHandoff()).resolves.toMatchObject({ revision: 1, state: "plan_review_pending" });
  });

  it("refuses in one line when the relay named cannot be reached", async () => {
    const { env } = await boundPlannerRun();
    const session = plannerSession({ home: "/nonexistent", env: { ...env, TWINLOCK_MCP_SOCKET: "/nonexistent/relay.sock" } });
    await expect(session.submitHandoff()).rejects.toThrow(/^plan's MCP relay cannot be reached over MCP \(.*ENOENT/);
  });
});
