import { writeFileSync } from "node:fs";
import path from "node:path";
import { Agent, type Model, type ModelProvider, type ModelResponse, Runner, tool, Usage } from "@openai/agents";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { boundPlannerRun, decideWhenFrozen, executorScenarios } from "../test-support/adapter-runs.js";
import { removeGateRuns, workflowOf } from "../test-support/run-fixture.js";
import { gateFunctionTools, plannerFunctionTools } from "./openai-agents.js";

afterAll(removeGateRuns);

/** A scripted Model: one function call per turn from `calls`, then a last message. */
function scriptedProvider(calls: Array<{ name: string; input: unknown }>): ModelProvider {
  let turn = 0;
  const model: Model = {
    async getResponse(): Promise<ModelResponse> {
      const call = calls[turn++];
      const output: ModelResponse["output"] = call
        ? [{ type: "function_call", callId: `call-${turn}`, name: call.name, arguments: JSON.stringify(call.input), status: "completed" }]
        : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }];
      return { usage: new Usage(), output };
    },
    getStreamedResponse() {
      throw new Error("the scripted model does not stream");
    },
  };
  return { getModel: () => model };
}

/** What each tool call answered the model, in order. */
function shownOf(items: ReadonlyArray<{ type: string }>): string[] {
  return items.flatMap((i) => (i.type === "tool_call_output_item" ? [String((i as unknown as { output: unknown }).output)] : []));
}

async function runAgent(tools: Parameters<typeof gateFunctionTools>[0], calls: Array<{ name: string; input: unknown }>) {
  const runner = new Runner({ modelProvider: scriptedProvider(calls), tracingDisabled: true });
  const agent = new Agent({ name: "agent", instructions: "follow the plan", tools: [...tools] });
  const r = await runner.run(agent, "go", { maxTurns: 5 });
  return shownOf(r.newItems);
}

describe("twinlock/openai-agents executor side (@openai/agents 0.14, a scripted Model)", () => {
  executorScenarios(async (o) => {
    const writeFile = tool({
      name: "write_file",
      description: "Write a file",
      parameters: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path: p, content }) => {
        writeFileSync(path.resolve(o.cwd, p), content);
        await o.onWritten?.();
        return "written";
      },
    });
    const tools = gateFunctionTools([writeFile], { home: o.home, env: o.env, cwd: o.cwd, scopes: o.scopes });
    const each = await runAgent(
      tools,
      o.paths.map((p) => ({ name: "write_file", input: { path: p, content: o.content } })),
    );
    return { shown: each.join("\n"), each };
  });
});

describe("twinlock/openai-agents planner side", () => {
  it("freezes the handoff, waits, and hears a person's signed decision with the comments", async () => {
    const { g, env } = await boundPlannerRun();
    const agent = runAgent(plannerFunctionTools({ home: g.home, env, pollMs: 20 }), [
      { name: "twinlock_submit_handoff", input: { unchanged_because: null } },
      { name: "twinlock_request_review", input: {} },
    ]);
    await decideWhenFrozen(g, "changes_requested", "Add Windows coverage");
    const shown = await agent;
    expect(JSON.parse(shown[0] as string)).toMatchObject({ revision: 1, state: "plan_review_pending" });
    expect(JSON.parse(shown[1] as string)).toMatchObject({ decision: "changes_requested", comments: "Add Windows coverage", revision: 1 });
    expect(workflowOf(g).state).toBe("plan_revision_pending");
  });

  it("offers the planner no tool that reviews, consents or approves", () => {
    expect(plannerFunctionTools({ home: "/nonexistent" }).map((t) => t.name)).toEqual([
      "twinlock_submit_handoff",
      "twinlock_request_review",
    ]);
  });
});
