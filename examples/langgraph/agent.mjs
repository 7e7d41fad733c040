// A LangGraph.js agent behind twinlock's gate. Run it as the pair's executor or planner:
//   twinlock exec run.json MD-30 --sandbox -- node "$(npm root)/twinlock/examples/langgraph/agent.mjs"
//   twinlock plan run.json MD-29 --handoff handoff --sandbox -- node "$(npm root)/twinlock/examples/langgraph/agent.mjs"
// With no model configured it uses a scripted chat model (LangChain's BaseChatModel), so it runs offline.
// The planner's graph has a checkpointer: the review pauses it with LangGraph's interrupt(), and it is
// resumed (here in the same process; any process on the same checkpointer could) once a person decided.
import { writeFileSync } from "node:fs";
import { z } from "zod";

// twinlock's adapter is loaded first, and the SDK after it, with import(): without the SDK installed the adapter ends
// the script with one line naming the package and the `npm install` line (a static import would fail before any code ran).
const { gateLangChainTools, plannerInterruptTools, reviewResume } = await import("twinlock/langgraph");
const { BaseChatModel } = await import("@langchain/core/language_models/chat_models");
const { AIMessage, ToolMessage } = await import("@langchain/core/messages");
const { tool } = await import("@langchain/core/tools");
const { MemorySaver } = await import("@langchain/langgraph");
const { createReactAgent } = await import("@langchain/langgraph/prebuilt");

// One line each on stderr: the planner's outcome (revision, decision, comments) and each denial with its reason.
const said = (value) => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};
const tell = (tool, output, denied) => {
  const o = said(output);
  if (denied) console.error(`twinlock: ${tool} denied: ${String(o?.message ?? o).replace(/^twinlock: \S+ denied: /, "")}`);
  else if (tool === "twinlock_request_review" && o?.decision)
    console.error(`twinlock: review of revision ${o.revision}: ${o.decision}${o.comments ? ` (${o.comments})` : ""}`);
};

const home = process.env.TWINLOCK_HOME; // set by `twinlock exec` and `twinlock plan`
class Scripted extends BaseChatModel {
  constructor(calls) {
    super({});
    this.calls = calls;
  }
  _llmType() {
    return "scripted";
  }
  bindTools() {
    return this;
  }
  async _generate(messages) {
    const turn = messages.filter((m) => m instanceof AIMessage).length; // so a resumed thread goes on where it was
    const c = this.calls[turn];
    const message = c ? new AIMessage({ content: "", tool_calls: [{ id: `c${turn}`, name: c[0], args: c[1], type: "tool_call" }] }) : new AIMessage("done");
    return { generations: [{ text: "", message }] };
  }
}

const show = (r) => {
  for (const m of r.messages)
    if (m instanceof ToolMessage) {
      // A denial is the ToolMessage: the gate's reason, which starts "twinlock: TOOL denied:" (or "judging TOOL failed").
      // It is said once, on stderr; any other output goes to stdout.
      const denied = /^twinlock: (\S+ denied:|judging )/.test(String(m.content));
      if (!denied) console.log(m.name, m.content);
      tell(m.name, m.content, denied);
    }
};
if (process.env.TWINLOCK_PLANNER) {
  const llm = new Scripted([["twinlock_submit_handoff", {}], ["twinlock_request_review", {}]]);
  const agent = createReactAgent({ llm, tools: plannerInterruptTools({ home }), checkpointSaver: new MemorySaver() });
  const thread = { configurable: { thread_id: "plan-MD-29" } };
  let r = await agent.invoke({ messages: [{ role: "user", content: "plan the fix" }] }, thread);
  while (r.__interrupt__?.length) {
    console.log("paused for review:", JSON.stringify(r.__interrupt__[0].value));
    // The resume carries the person's decision as the gate recorded it; the tool re-reads the gate either way.
    r = await agent.invoke(await reviewResume({ home }), thread);
  }
  show(r);
} else {
  const writeFile = tool(async ({ path, content }) => (writeFileSync(path, content), "written"), {
    name: "write_file",
    description: "Write a file",
    schema: z.object({ path: z.string(), content: z.string() }),
  });
  const tools = gateLangChainTools([writeFile], { home, scopes: { write_file: { writes: (i) => i.path } } });
  const llm = new Scripted([["write_file", { path: process.argv[2] ?? "cart/cache.go", content: "package cart\n" }]]);
  show(await createReactAgent({ llm, tools }).invoke({ messages: [{ role: "user", content: "follow the plan" }] }));
}
