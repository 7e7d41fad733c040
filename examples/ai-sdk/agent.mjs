// An AI SDK agent behind twinlock's gate. Run it as the pair's executor or planner:
//   twinlock exec run.json MD-30 --sandbox -- node "$(npm root)/twinlock/examples/ai-sdk/agent.mjs"
//   twinlock plan run.json MD-29 --handoff handoff --sandbox -- node "$(npm root)/twinlock/examples/ai-sdk/agent.mjs"
// With no model configured it uses the AI SDK's MockLanguageModelV3, scripted to make one call, so it runs offline.
import { writeFileSync } from "node:fs";
import { z } from "zod";

// twinlock's adapter is loaded first, and the SDK after it, with import(): without the SDK installed the adapter ends
// the script with one line naming the package and the `npm install` line (a static import would fail before any code ran).
const { gateTools, plannerTools } = await import("twinlock/ai-sdk");
const { generateText, stepCountIs, tool } = await import("ai");
const { MockLanguageModelV3 } = await import("ai/test");

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
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const scripted = (calls) => {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const c = calls[step++];
      return c
        ? { content: [{ type: "tool-call", toolCallId: `c${step}`, toolName: c[0], input: JSON.stringify(c[1]) }], finishReason: { unified: "tool-calls" }, usage, warnings: [] }
        : { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop" }, usage, warnings: [] };
    },
  });
};

let tools;
let model;
if (process.env.TWINLOCK_PLANNER) {
  tools = plannerTools({ home });
  model = scripted([["twinlock_submit_handoff", {}], ["twinlock_request_review", {}]]);
} else {
  const write_file = tool({
    description: "Write a file",
    inputSchema: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path, content }) => (writeFileSync(path, content), "written"),
  });
  // What each tool does, for the gate: write_file writes the file its `path` names.
  tools = gateTools({ write_file }, { home, scopes: { write_file: { writes: (i) => i.path } } });
  model = scripted([["write_file", { path: process.argv[2] ?? "cart/cache.go", content: "package cart\n" }]]);
}
const r = await generateText({ model, prompt: "follow the plan", tools, stopWhen: stepCountIs(4) });
for (const step of r.steps)
  for (const c of step.content)
    if (c.type === "tool-result") console.log(c.toolName, JSON.stringify(c.output)), tell(c.toolName, c.output, false);
    else if (c.type === "tool-error") tell(c.toolName, c.error, true); // a denial: one line, on stderr only
