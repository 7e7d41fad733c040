// A LangGraph.js agent behind twinlock's gate. Run it as the pair's executor or planner:
//   twinlock exec run.json MD-30 --sandbox -- node examples/langgraph/agent.mjs
//   twinlock plan run.json MD-29 --handoff handoff --sandbox -- node examples/langgraph/agent.mjs
// With no model configured it uses a scripted chat model (LangChain's BaseChatModel), so it runs offline.
import { writeFileSync } from "node:fs";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { gateLangChainTools, plannerLangChainTools } from "twinlock/langgraph";
import { z } from "zod";

const home = process.env.TWINLOCK_HOME; // set by `twinlock exec` and `twinlock plan`
class Scripted extends BaseChatModel {
  constructor(calls) {
    super({});
    this.calls = calls;
    this.turn = 0;
  }
  _llmType() {
    return "scripted";
  }
  bindTools() {
    return this;
  }
  async _generate() {
    const c = this.calls[this.turn++];
    const message = c ? new AIMessage({ content: "", tool_calls: [{ id: `c${this.turn}`, name: c[0], args: c[1], type: "tool_call" }] }) : new AIMessage("done");
    return { generations: [{ text: "", message }] };
  }
}

let tools;
let llm;
if (process.env.TWINLOCK_PLANNER) {
  tools = plannerLangChainTools({ home });
  llm = new Scripted([["twinlock_submit_handoff", {}], ["twinlock_request_review", {}]]);
} else {
  const writeFile = tool(async ({ path, content }) => (writeFileSync(path, content), "written"), {
    name: "write_file",
    description: "Write a file",
    schema: z.object({ path: z.string(), content: z.string() }),
  });
  tools = gateLangChainTools([writeFile], { home, scopes: { write_file: { writes: (i) => i.path } } });
  llm = new Scripted([["write_file", { path: process.argv[2] ?? "cart/cache.go", content: "package cart\n" }]]);
}
const r = await createReactAgent({ llm, tools }).invoke({ messages: [{ role: "user", content: "follow the plan" }] });
for (const m of r.messages) if (m instanceof ToolMessage) console.log(m.name, m.content);
