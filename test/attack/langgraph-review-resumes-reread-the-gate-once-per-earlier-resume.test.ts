/*
 * plannerInterruptTools' twinlock_request_review loops: read the gate, and
 * with no decision call interrupt() again. LangGraph re-runs the tool from its
 * start on every resume, and each earlier interrupt() returns its old resume
 * value at once, so the k-th resume with no decision recorded reads the gate
 * k + 1 times (and the checkpoint keeps every resume value): whoever resumes
 * the thread (the graph's resume value is the agent's to choose) makes each
 * later wake-up slower without end, a quadratic cost on the host. One resume
 * should cost one read of the gate, however many came before it.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { afterAll, describe, expect, it } from "vitest";
import { plannerInterruptTools } from "../../src/adapters/langgraph.js";
import { type PlannerSession, plannerSession } from "../../src/adapters/planner-session.js";
import { boundPlannerRun } from "../../src/test-support/adapter-runs.js";
import { removeGateRuns } from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

/** LangGraph's planner model, scripted: freeze, ask for the review, then a last message. */
class Planner extends BaseChatModel {
  _llmType(): string {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const turn = messages.filter((m) => m instanceof AIMessage).length;
    const name = ["twinlock_submit_handoff", "twinlock_request_review"][turn];
    const message = name
      ? new AIMessage({ content: "", tool_calls: [{ id: `call-${turn}`, name, args: {}, type: "tool_call" }] })
      : new AIMessage("done");
    return { generations: [{ text: "", message }] };
  }
}

describe("twinlock/langgraph's review pause, resumed again and again with no decision recorded", () => {
  it("reads the gate a bounded number of times per resume, however many resumes came before", async () => {
    const { g, env } = await boundPlannerRun();
    const real = plannerSession({ home: g.home, env });
    let reads = 0;
    const session: PlannerSession = {
      ...real,
      reviewNow: () => {
        reads++;
        return real.reviewNow();
      },
    };
    const agent = createReactAgent({ llm: new Planner({}), tools: plannerInterruptTools({ session }), checkpointSaver: new MemorySaver() });
    const config = { configurable: { thread_id: "t" }, recursionLimit: 10 };
    await agent.invoke({ messages: [{ role: "user", content: "plan" }] }, config);
    const perResume: number[] = [];
    for (let i = 0; i < 8; i++) {
      const before = reads;
      await agent.invoke(new Command({ resume: { decision: "approved" } }), config);
      perResume.push(reads - before);
    }
    expect(Math.max(...perResume)).toBeLessThanOrEqual(2);
  });
});
