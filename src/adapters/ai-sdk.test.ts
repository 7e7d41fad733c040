import { writeFileSync } from "node:fs";
import path from "node:path";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { boundPlannerRun, decideWhenFrozen, executorScenarios } from "../test-support/adapter-runs.js";
import { removeGateRuns, workflowOf } from "../test-support/run-fixture.js";
import { gateTools, plannerTools } from "./ai-sdk.js";

afterAll(removeGateRuns);

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** The AI SDK's own mock model, scripted: one call of each tool in `calls` (one step each), then a last text. */
function scriptedModel(calls: Array<{ toolName: string; input: unknown }>) {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const call = calls[step++];
      if (!call) return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      return {
        content: [{ type: "tool-call", toolCallId: `call-${step}`, toolName: call.toolName, input: JSON.stringify(call.input) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
}

/** Every tool result or tool error the model was shown, in order. */
function shownOf(steps: ReadonlyArray<{ content: ReadonlyArray<{ type: string; output?: unknown; error?: unknown }> }>): string[] {
  return steps.flatMap((s) =>
    s.content.flatMap((c) =>
      c.type === "tool-result"
        ? [JSON.stringify(c.output)]
        : c.type === "tool-error"
          ? [String((c.error as Error)?.message ?? c.error)]
          : [],
    ),
  );
}

describe("twinlock/ai-sdk executor side (ai 6, MockLanguageModelV3)", () => {
  executorScenarios(async (o) => {
    const write_file = tool({
      description: "Write a file",
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path: p, content }) => {
        writeFileSync(path.resolve(o.cwd, p), content);
        await o.onWritten?.();
        return "written";
      },
    });
    const tools = gateTools({ write_file }, { home: o.home, env: o.env, cwd: o.cwd, scopes: o.scopes });
    const r = await generateText({
      model: scriptedModel(o.paths.map((p) => ({ toolName: "write_file", input: { path: p, content: o.content } }))),
      prompt: "apply the plan",
      tools,
      stopWhen: stepCountIs(o.paths.length + 2),
    });
    const each = shownOf(r.steps);
    return { shown: each.join("\n"), each };
  });
});

describe("twinlock/ai-sdk planner side", () => {
  it("freezes the handoff, waits, and hears a person's signed decision with the comments", async () => {
    const { g, env } = await boundPlannerRun();
    const tools = plannerTools({ home: g.home, env, pollMs: 20 });
    const agent = generateText({
      model: scriptedModel([
        { toolName: "twinlock_submit_handoff", input: {} },
        { toolName: "twinlock_request_review", input: {} },
      ]),
      prompt: "plan the fix",
      tools,
      stopWhen: stepCountIs(4),
    });
    await decideWhenFrozen(g, "changes_requested", "Add Windows coverage");
    const shown = shownOf((await agent).steps);
    expect(JSON.parse(shown[0] as string)).toMatchObject({ revision: 1, state: "plan_review_pending" });
    expect(JSON.parse(shown[1] as string)).toMatchObject({ decision: "changes_requested", comments: "Add Windows coverage", revision: 1 });
    expect(workflowOf(g).state).toBe("plan_revision_pending");
  });

  it("offers the planner no tool that reviews, consents or approves", () => {
    expect(Object.keys(plannerTools({ home: "/nonexistent" }))).toEqual(["twinlock_submit_handoff", "twinlock_request_review"]);
  });

  it("refuses to freeze without a planner's session, in one line to the model", async () => {
    const { g } = await boundPlannerRun();
    const tools = plannerTools({
      home: g.home,
      env: { TWINLOCK_RUN: g.runFile, TWINLOCK_PLANNER: "MD-29", TWINLOCK_SESSION: "0".repeat(64) },
    });
    const r = await generateText({
      model: scriptedModel([{ toolName: "twinlock_submit_handoff", input: {} }]),
      prompt: "plan",
      tools,
      stopWhen: stepCountIs(2),
    });
    expect(shownOf(r.steps)[0]).toMatch(/no planner's session holds: TWINLOCK_SESSION is not this binding's secret/);
    expect(workflowOf(g).handoff).toBeNull();
  });
});
