// An OpenAI Agents SDK agent behind twinlock's gate. Run it as the pair's executor or planner:
//   twinlock exec run.json MD-30 --sandbox -- node "$(npm root)/twinlock/examples/openai-agents/agent.mjs"
//   twinlock plan run.json MD-29 --handoff handoff --sandbox -- node "$(npm root)/twinlock/examples/openai-agents/agent.mjs"
// With no model configured it uses a scripted Model (the SDK's Model interface), so it runs offline.
import { writeFileSync } from "node:fs";
import { z } from "zod";

// twinlock's adapter is loaded first, and the SDK after it, with import(): without the SDK installed the adapter ends
// the script with one line naming the package and the `npm install` line (a static import would fail before any code ran).
const { gateFunctionTools, plannerFunctionTools } = await import("twinlock/openai-agents");
const { Agent, Runner, tool, Usage } = await import("@openai/agents");

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
const scripted = (calls) => {
  let turn = 0;
  const model = {
    async getResponse() {
      const c = calls[turn++];
      const output = c
        ? [{ type: "function_call", callId: `c${turn}`, name: c[0], arguments: JSON.stringify(c[1]), status: "completed" }]
        : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }];
      return { usage: new Usage(), output };
    },
    getStreamedResponse() {
      throw new Error("not streamed");
    },
  };
  return { getModel: () => model };
};

let tools;
let provider;
if (process.env.TWINLOCK_PLANNER) {
  tools = plannerFunctionTools({ home });
  provider = scripted([["twinlock_submit_handoff", { unchanged_because: null }], ["twinlock_request_review", {}]]);
} else {
  const writeFile = tool({
    name: "write_file",
    description: "Write a file",
    parameters: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path, content }) => (writeFileSync(path, content), "written"),
  });
  tools = gateFunctionTools([writeFile], { home, scopes: { write_file: { writes: (i) => i.path } } });
  provider = scripted([["write_file", { path: process.argv[2] ?? "cart/cache.go", content: "package cart\n" }]]);
}
const runner = new Runner({ modelProvider: provider, tracingDisabled: true });
const r = await runner.run(new Agent({ name: "agent", instructions: "follow the plan", tools }), "go", { maxTurns: 5 });
for (const item of r.newItems)
  if (item.type === "tool_call_output_item") {
    // A denial is the tool's output: the gate's reason, which starts "twinlock: TOOL denied:" (or "judging TOOL failed").
    // It is said once, on stderr; any other output goes to stdout.
    const denied = /^twinlock: (\S+ denied:|judging )/.test(String(item.output));
    if (!denied) console.log(item.rawItem.name, item.output);
    tell(item.rawItem.name, item.output, denied);
  }
