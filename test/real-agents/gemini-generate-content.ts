import type { ServerResponse } from "node:http";
import { type ModelTurn, type Responder, writeJson, writeSse } from "./model-server.js";
import { FINAL_TEXT, FREEZE_TOOL, freezeArgs, type ScriptedAction, shellLine } from "./scripted-action.js";

type Part = { text?: string; functionCall?: unknown; functionResponse?: { name?: string; response?: unknown } };
type Content = { role?: string; parts?: Part[] };
type Tools = { functionDeclarations?: { name?: string }[] }[];

/** Gemini CLI's tool and arguments for a scripted action. */
function geminiCall(action: ScriptedAction, tools: Tools): { name: string; args: Record<string, unknown> } {
  if (action.kind === "freeze") {
    // The MCP tool under the name Gemini CLI offered it (bare, or `mcp_twinlock_` before it).
    const names = tools.flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name ?? ""));
    return { name: names.find((n) => n.endsWith(FREEZE_TOOL)) ?? FREEZE_TOOL, args: freezeArgs(action) };
  }
  if (action.kind === "crafted-patch") throw new Error("the crafted patch is Codex's: Gemini CLI has no apply_patch");
  if (action.kind === "outward") {
    if (action.tool === "google_web_search") return { name: "google_web_search", args: { query: `what is at ${action.url}` } };
    if (action.tool === "save_memory") return { name: "save_memory", args: { fact: "the scripted model was here" } };
    return { name: "web_fetch", args: { prompt: `Summarize ${action.url}` } };
  }
  if (action.kind === "write") return { name: "write_file", args: { file_path: action.file, content: action.content } };
  if (action.kind === "edit")
    return {
      name: "replace",
      args: { file_path: action.file, old_string: action.oldText, new_string: action.newText, instruction: "edit the line" },
    };
  return { name: "run_shell_command", args: { command: shellLine(action), description: "write a file" } };
}

/**
 * Gemini `generateContent` / `streamGenerateContent?alt=sse`
 * (`POST /v1beta/models/MODEL:…`), as Gemini CLI speaks it through
 * GOOGLE_GEMINI_BASE_URL: a request that offers the scripted tool and has no
 * function response yet gets that function call; every other (the response
 * back, or a side request such as the next-speaker check) gets FINAL_TEXT.
 * `countTokens` answers a small count.
 */
export function geminiGenerateContent(action: ScriptedAction): Responder {
  return ({ request }: ModelTurn, res: ServerResponse) => {
    const url = request.path;
    if (request.method !== "POST") return writeJson(res, 404, { error: { code: 404, message: `no ${url} here`, status: "NOT_FOUND" } });
    if (url.endsWith(":countTokens")) return writeJson(res, 200, { totalTokens: 10 });
    const streamed = url.endsWith(":streamGenerateContent");
    if (!streamed && !url.endsWith(":generateContent"))
      return writeJson(res, 404, { error: { code: 404, message: `no ${url} here`, status: "NOT_FOUND" } });
    const body = (request.body ?? {}) as { contents?: Content[]; tools?: Tools };
    const call = geminiCall(action, body.tools ?? []);
    const offered = (body.tools ?? []).some((t) => (t.functionDeclarations ?? []).some((f) => f.name === call.name));
    const last = body.contents?.at(-1);
    const answered = (last?.parts ?? []).some((p) => p.functionResponse !== undefined);
    const part: Part = offered && !answered ? { functionCall: call } : { text: FINAL_TEXT };
    const chunk = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "gemini-scripted",
    };
    if (streamed) return writeSse(res, [{ data: chunk }]);
    writeJson(res, 200, chunk);
  };
}

/** The function responses Gemini CLI sent back, as text (the hook's deny reason is in one when it denied). */
export function geminiFunctionResponses(bodies: unknown[]): string[] {
  const out: string[] = [];
  for (const b of bodies)
    for (const c of ((b as { contents?: Content[] })?.contents ?? []) as Content[])
      for (const p of c.parts ?? []) if (p.functionResponse) out.push(JSON.stringify(p.functionResponse.response));
  return [...new Set(out)];
}
