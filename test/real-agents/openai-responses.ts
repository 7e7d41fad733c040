import type { ServerResponse } from "node:http";
import { type ModelTurn, type Responder, writeJson, writeSse } from "./model-server.js";
import { FINAL_TEXT, FREEZE_TOOL, freezeArgs, type ScriptedAction, shellLine } from "./scripted-action.js";

type Item = { type?: string; [key: string]: unknown };
type Tool = { type?: string; name?: string };

/** The patch Codex's `apply_patch` applies for a write or an edit (paths relative to the session's folder work too; absolute is plainer). */
export function codexPatch(action: Exclude<ScriptedAction, { kind: "shell" | "outward" | "freeze" | "reads" }>): string {
  if (action.kind === "crafted-patch")
    return `*** Begin Patch\n*** Add File: ${action.file}\n+${" ".repeat(action.spaces)}x\n*** End Patch\n`;
  if (action.kind === "write")
    return `*** Begin Patch\n*** Add File: ${action.file}\n${action.content
      .split("\n")
      .filter((l, i, all) => i < all.length - 1 || l !== "")
      .map((l) => `+${l}`)
      .join("\n")}\n*** End Patch\n`;
  return `*** Begin Patch\n*** Update File: ${action.file}\n@@\n-${action.oldText}\n+${action.newText}\n*** End Patch\n`;
}

/**
 * The output item that asks Codex for the scripted action, in the form of the
 * tool Codex offered: `apply_patch` as a freeform (custom) tool or a
 * function, the shell as `exec_command` (unified exec) or `shell`.
 */
function codexCall(action: ScriptedAction, tools: Tool[], callId: string): Item | undefined {
  if (action.kind === "outward") throw new Error("Codex's outward tool (web_search) runs on the model's side, not through a hook");
  const offered = (name: string) => tools.find((t) => t.name === name);
  if (action.kind === "freeze") {
    // The MCP tool under the name Codex offered it. Codex 0.169.0 offers none by name: it defers MCP tools behind its
    // client-side tool_search, which this scripted model does not drive (see the test), so nothing is asked for then.
    const tool = tools.find((t) => t.name?.endsWith(FREEZE_TOOL));
    if (!tool?.name) return undefined;
    return { type: "function_call", name: tool.name, call_id: callId, arguments: JSON.stringify(freezeArgs(action)) };
  }
  if (action.kind === "shell") {
    if (offered("exec_command"))
      return { type: "function_call", name: "exec_command", call_id: callId, arguments: JSON.stringify({ cmd: shellLine(action) }) };
    if (offered("shell"))
      return {
        type: "function_call",
        name: "shell",
        call_id: callId,
        arguments: JSON.stringify({ command: ["bash", "-c", shellLine(action)] }),
      };
    return undefined;
  }
  const patch = offered("apply_patch");
  if (patch?.type === "custom") return { type: "custom_tool_call", name: "apply_patch", call_id: callId, input: codexPatch(action) };
  if (patch)
    return { type: "function_call", name: "apply_patch", call_id: callId, arguments: JSON.stringify({ input: codexPatch(action) }) };
  return undefined;
}

const OUTPUT_TYPES = new Set(["function_call_output", "custom_tool_call_output"]);

/**
 * OpenAI Responses (`POST …/responses`, streamed as SSE), as Codex speaks it
 * to a custom model provider's `base_url`: a request whose input has no tool
 * output yet gets the scripted call; the one carrying its output (and any
 * side request) gets FINAL_TEXT. `GET …/models` answers an empty list.
 */
export function openaiResponses(action: ScriptedAction): Responder {
  let n = 0;
  return ({ request }: ModelTurn, res: ServerResponse) => {
    const url = request.path;
    if (request.method === "GET" && url.endsWith("/models")) return writeJson(res, 200, { object: "list", data: [], models: [] });
    if (request.method !== "POST" || !url.endsWith("/responses"))
      return writeJson(res, 404, { error: { message: `no ${url} here`, type: "not_found" } });
    const body = (request.body ?? {}) as { input?: Item[]; tools?: Tool[] };
    const input = body.input ?? [];
    n += 1;
    const id = `resp_${n}`;
    const call = input.some((i) => OUTPUT_TYPES.has(i.type ?? "")) ? undefined : codexCall(action, body.tools ?? [], `call_${n}`);
    const item: Item = call ?? {
      type: "message",
      role: "assistant",
      id: `msg_${n}`,
      content: [{ type: "output_text", text: FINAL_TEXT, annotations: [] }],
    };
    const usage = { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 };
    writeSse(res, [
      { event: "response.created", data: { type: "response.created", response: { id } } },
      { event: "response.output_item.done", data: { type: "response.output_item.done", output_index: 0, item } },
      { event: "response.completed", data: { type: "response.completed", response: { id, usage } } },
    ]);
  };
}

/** The tool outputs Codex sent back, as text (the hook's block reason is in one when it blocked). */
export function codexToolOutputs(bodies: unknown[]): string[] {
  const out: string[] = [];
  for (const b of bodies)
    for (const i of ((b as { input?: Item[] })?.input ?? []) as Item[])
      if (OUTPUT_TYPES.has(i.type ?? "")) out.push(typeof i.output === "string" ? i.output : JSON.stringify(i.output));
  return [...new Set(out)];
}
