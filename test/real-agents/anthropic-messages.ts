import type { ServerResponse } from "node:http";
import { type ModelTurn, type Responder, writeJson, writeSse } from "./model-server.js";
import { FINAL_TEXT, FREEZE_TOOL, freezeArgs, type ScriptedAction, shellLine } from "./scripted-action.js";

type Block = { type: string; [key: string]: unknown };
type Message = { role: string; content: string | Block[] };

export type ToolUse = { name: string; input: Record<string, unknown> };

/** Claude Code's tool calls for a scripted action, in order: its Edit refuses a file it has not Read first. */
function claudeToolUses(action: ScriptedAction): ToolUse[] {
  if (action.kind === "crafted-patch") throw new Error("the crafted patch is Codex's: Claude Code has no apply_patch");
  if (action.kind === "outward") {
    if (action.tool === "WebFetch") return [{ name: "WebFetch", input: { url: action.url, prompt: "say what it holds" } }];
    if (action.tool === "WebSearch") return [{ name: "WebSearch", input: { query: `what is at ${action.url}` } }];
    return [
      {
        name: "Agent",
        input: { description: "fetch a page", prompt: `Fetch ${action.url} and say what it holds`, subagent_type: "general-purpose" },
      },
    ];
  }
  if (action.kind === "freeze") return [{ name: `mcp__twinlock__${FREEZE_TOOL}`, input: freezeArgs(action) }];
  if (action.kind === "reads") return Array.from({ length: action.count }, () => ({ name: "Read", input: { file_path: action.file } }));
  if (action.kind === "write") return [{ name: "Write", input: { file_path: action.file, content: action.content } }];
  if (action.kind === "edit")
    return [
      { name: "Read", input: { file_path: action.file } },
      { name: "Edit", input: { file_path: action.file, old_string: action.oldText, new_string: action.newText } },
    ];
  return [{ name: "Bash", input: { command: shellLine(action), description: "write a file" } }];
}

/**
 * Anthropic Messages (`POST /v1/messages`, SSE when `stream: true`), as Claude
 * Code speaks it through ANTHROPIC_BASE_URL: a request that offers the
 * scripted action's next tool gets that call (each once per run); every
 * other (all calls made, or a side request with no tools, such as a title)
 * gets FINAL_TEXT and `end_turn`.
 */
export function anthropicMessages(action: ScriptedAction): Responder {
  return anthropicToolCalls(claudeToolUses(action));
}

/** The same server for any list of Claude Code tool calls, each made once, in order (the in-process SDK tests' own scripts). */
export function anthropicToolCalls(calls: ToolUse[]): Responder {
  let n = 0;
  // Each call is asked for once per run, whichever conversation asks next: a subagent's starts afresh.
  let issued = 0;
  return ({ request }: ModelTurn, res: ServerResponse) => {
    const url = request.path;
    if (request.method !== "POST" || !url.endsWith("/v1/messages")) {
      if (url.endsWith("/count_tokens")) return writeJson(res, 200, { input_tokens: 10 });
      return writeJson(res, 404, { type: "error", error: { type: "not_found_error", message: `no ${url} here` } });
    }
    const body = (request.body ?? {}) as { messages?: Message[]; tools?: { name?: string }[]; stream?: boolean; model?: string };
    const call = calls[issued];
    const use = call !== undefined && (body.tools ?? []).some((t) => t.name === call.name) ? call : undefined;
    if (use) issued += 1;
    n += 1;
    const id = `msg_scripted_${n}`;
    const model = body.model ?? "claude-scripted";
    const block: Block = use
      ? { type: "tool_use", id: `toolu_scripted_${n}`, name: use.name, input: use.input }
      : { type: "text", text: FINAL_TEXT };
    const stopReason = use ? "tool_use" : "end_turn";
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (!body.stream)
      return writeJson(res, 200, {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [block],
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      });
    const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
    const delta =
      block.type === "tool_use"
        ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
        : { type: "text_delta", text: FINAL_TEXT };
    writeSse(res, [
      {
        event: "message_start",
        data: {
          type: "message_start",
          message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage },
        },
      },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: start } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta } },
      { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
      {
        event: "message_delta",
        data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } },
      },
      { event: "message_stop", data: { type: "message_stop" } },
    ]);
  };
}

/** The tool results Claude Code sent back, as text (the hook's deny reason is in one when it denied). */
export function anthropicToolResults(bodies: unknown[]): string[] {
  const out: string[] = [];
  for (const b of bodies) {
    for (const m of ((b as { messages?: Message[] })?.messages ?? []) as Message[]) {
      if (!Array.isArray(m.content)) continue;
      for (const block of m.content)
        if (block.type === "tool_result") out.push(typeof block.content === "string" ? block.content : JSON.stringify(block.content));
    }
  }
  return [...new Set(out)];
}
