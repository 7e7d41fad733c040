// A Claude Agent SDK agent behind twinlock's gate. Run it as the pair's executor or planner:
//   twinlock exec run.json MD-30 --hook-only -- node "$(npm root)/twinlock/examples/claude-agent-sdk/agent.mjs"
//   twinlock plan run.json MD-29 --handoff handoff --hook-only -- node "$(npm root)/twinlock/examples/claude-agent-sdk/agent.mjs"
// It is not offline: it drives Claude Code as the SDK does, which needs ANTHROPIC_API_KEY (--pass-env ANTHROPIC_API_KEY),
// or ANTHROPIC_BASE_URL pointing at a model server of your own.
// twinlock's adapter is loaded first, and the SDK after it, with import(): without the SDK installed the adapter ends
// the script with one line naming the package and the `npm install` line (a static import would fail before any code ran).
const { gateHooks, plannerMcpServer } = await import("twinlock/claude-agent-sdk");
const { query } = await import("@anthropic-ai/claude-agent-sdk");

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
const planner = Boolean(process.env.TWINLOCK_PLANNER);
const options = {
  hooks: gateHooks({ home }), // every tool call of Claude Code is judged before it runs
  permissionMode: "acceptEdits",
  settingSources: [],
  ...(planner
    ? {
        mcpServers: { twinlock: plannerMcpServer({ home }) },
        allowedTools: ["mcp__twinlock__twinlock_submit_handoff", "mcp__twinlock__twinlock_request_review"],
      }
    : { allowedTools: ["Read", "Write", "Edit"] }),
};
const prompt = planner
  ? "Write the plan into the handoff folder, freeze it with twinlock_submit_handoff, then wait for the review with twinlock_request_review."
  : "Apply the approved plan in the handoff folder ($TWINLOCK_HANDOFF).";
const names = new Map(); // tool_use id → tool name, to name each result
for await (const message of query({ prompt, options })) {
  if (message.type === "result") console.log(message.subtype, message.result ?? "");
  const blocks = Array.isArray(message.message?.content) ? message.message.content : [];
  for (const b of blocks) {
    if (b.type === "tool_use") names.set(b.id, b.name.replace(/^mcp__twinlock__/, ""));
    if (b.type !== "tool_result") continue;
    const text = Array.isArray(b.content) ? b.content.map((c) => c.text ?? "").join("") : b.content;
    // A call the gate's hook denied comes back as an error result with the gate's reason.
    tell(names.get(b.tool_use_id) ?? "tool", text, b.is_error === true);
  }
}
