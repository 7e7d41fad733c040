/*
 * gateLangChainTools wraps each tool in a new LangChain tool with the
 * original's schema: LangChain parses the model's arguments through that
 * schema once for the wrapper (the gate judges that output), and the wrapper
 * then calls the original's `invoke`, which parses them through the same
 * schema again. A schema whose parse is not idempotent — a transform that
 * resolves a path against the tool's own folder, which LangChain's JSON
 * schema renders as a plain string — hands the tool a path the gate never
 * judged. Here the tool's paths are relative to `cart/`: the model asks for
 * `cache.go`, the gate judges cart/cache.go (an admitted target) and allows,
 * and the tool writes cart/cart/cache.go, outside every target.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { gateLangChainTools } from "../../src/adapters/langgraph.js";
import { admitAndBind, consentedRun, WRITTEN } from "../../src/test-support/adapter-runs.js";
import { removeGateRuns } from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

/** LangChain's own chat model base, scripted: one tool call, then a last message. */
class OneCall extends BaseChatModel {
  constructor(private readonly call: { name: string; args: Record<string, unknown> }) {
    super({});
  }
  _llmType(): string {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const first = !messages.some((m) => m instanceof AIMessage);
    const message = first
      ? new AIMessage({ content: "", tool_calls: [{ id: "call-1", ...this.call, type: "tool_call" }] })
      : new AIMessage("done");
    return { generations: [{ text: "", message }] };
  }
}

describe("twinlock/langgraph on a tool whose schema transforms its input", () => {
  it("writes only the path the gate judged: a path the schema resolves against the tool's folder is not resolved twice", async () => {
    const { g } = await consentedRun();
    const { env } = await admitAndBind(g);
    const cwd = g.dir;
    const written: string[] = [];
    // The application's tool: its paths are relative to cart/, as its schema says.
    const writeFile = tool(
      async ({ path: p, content }) => {
        const file = path.resolve(cwd, p);
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, content);
        written.push(path.relative(cwd, file));
        return "written";
      },
      {
        name: "write_file",
        description: "Write a file of the cart package",
        schema: z.object({ path: z.string().transform((p) => path.join("cart", p)), content: z.string() }),
      },
    );
    const tools = gateLangChainTools([writeFile], {
      home: g.home,
      env,
      cwd,
      scopes: { write_file: { writes: (i) => (i as { path: string }).path } },
    });
    const agent = createReactAgent({ llm: new OneCall({ name: "write_file", args: { path: "cache.go", content: WRITTEN } }), tools });
    const r = await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { recursionLimit: 6 });
    const shown = (r.messages as BaseMessage[]).filter((m) => m instanceof ToolMessage).map((m) => String(m.content));
    expect(shown).toHaveLength(1);
    expect(existsSync(path.join(cwd, "cart", "cart", "cache.go"))).toBe(false);
    expect(written.every((w) => w === path.join("cart", "cache.go"))).toBe(true);
  });
});
