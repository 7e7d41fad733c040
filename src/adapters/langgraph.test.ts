import { writeFileSync } from "node:fs";
import path from "node:path";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { boundPlannerRun, decideWhenFrozen, executorScenarios } from "../test-support/adapter-runs.js";
import { removeGateRuns, workflowOf } from "../test-support/run-fixture.js";
import { gateLangChainTools, plannerLangChainTools } from "./langgraph.js";

afterAll(removeGateRuns);

/** A fake chat model on LangChain's own base class: one tool call per turn from `calls`, then a last message. */
class ScriptedChatModel extends BaseChatModel {
  private turn = 0;
  constructor(private readonly calls: Array<{ name: string; args: Record<string, unknown> }>) {
    super({});
  }
  _llmType(): string {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const call = this.calls[this.turn++];
    const message = call
      ? new AIMessage({ content: "", tool_calls: [{ id: `call-${this.turn}`, name: call.name, args: call.args, type: "tool_call" }] })
      : new AIMessage("done");
    return { generations: [{ text: "", message }] };
  }
}

async function runAgent(tools: StructuredToolInterface[], calls: Array<{ name: string; args: Record<string, unknown> }>) {
  const agent = createReactAgent({ llm: new ScriptedChatModel(calls), tools });
  const r = await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { recursionLimit: 10 });
  return (r.messages as BaseMessage[]).filter((m) => m instanceof ToolMessage).map((m) => String(m.content));
}

describe("twinlock/langgraph executor side (@langchain/langgraph 1.7, a fake chat model)", () => {
  executorScenarios(async (o) => {
    const writeFile = tool(
      async ({ path: p, content }) => {
        writeFileSync(path.resolve(o.cwd, p), content);
        await o.onWritten?.();
        return "written";
      },
      { name: "write_file", description: "Write a file", schema: z.object({ path: z.string(), content: z.string() }) },
    );
    const tools = gateLangChainTools([writeFile], { home: o.home, env: o.env, cwd: o.cwd, scopes: o.scopes });
    const each = await runAgent(
      tools,
      o.paths.map((p) => ({ name: "write_file", args: { path: p, content: o.content } })),
    );
    return { shown: each.join("\n"), each };
  });
});

describe("twinlock/langgraph planner side", () => {
  it("freezes the handoff, waits, and hears a person's signed decision with the comments", async () => {
    const { g, env } = await boundPlannerRun();
    const agent = runAgent(plannerLangChainTools({ home: g.home, env, pollMs: 20 }), [
      { name: "twinlock_submit_handoff", args: {} },
      { name: "twinlock_request_review", args: {} },
    ]);
    await decideWhenFrozen(g, "changes_requested", "Add Windows coverage");
    const shown = await agent;
    expect(JSON.parse(shown[0] as string)).toMatchObject({ revision: 1, state: "plan_review_pending" });
    expect(JSON.parse(shown[1] as string)).toMatchObject({ decision: "changes_requested", comments: "Add Windows coverage", revision: 1 });
    expect(workflowOf(g).state).toBe("plan_revision_pending");
  });

  it("offers the planner no tool that reviews, consents or approves", () => {
    expect(plannerLangChainTools({ home: "/nonexistent" }).map((t) => t.name)).toEqual([
      "twinlock_submit_handoff",
      "twinlock_request_review",
    ]);
  });
});
