/**
 * What `twinlock/claude-agent-sdk` loads (its entry, claude-agent-sdk.ts, loads it so a missing SDK is one clear line): the gate inside the Claude Agent SDK
 * (`@anthropic-ai/claude-agent-sdk` 0.3.328, driving Claude Code 2.1.328).
 * The executor's every tool call goes through a PreToolUse hook callback
 * (and, for the calls Claude Code asks permission for, `canUseTool`) that
 * judges it as the CLI hook judges Claude Code's tools: a deny carries the
 * reason Claude Code shows the model. The planner gets an in-process MCP
 * server named `twinlock` with two tools: freeze the handoff, and wait for a
 * person's review. Nothing here answers `allow` for a person, reviews or consents:
 * an allowed call is left to the application's own permission rules.
 */
import { type CanUseTool, createSdkMcpServer, type HookCallbackMatcher, type HookJSONOutput, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { AGENT_CONTRACTS, readHookInput } from "../hook/agent-contracts.js";
import { TWINLOCK_MCP_SERVER } from "../hook/decide-tool-call.js";
import { judgeToolCall, type ToolJudgement } from "../hook/judge-tool-call.js";
import { type PlannerSource, refusalText, sessionOf } from "./planner-session.js";

export interface ClaudeGateOptions {
  /** The gate home the session is bound in (`twinlock exec` and `twinlock plan` set TWINLOCK_HOME); named by the application. */
  home: string;
  /** The session's environment; by default a copy of process.env taken when the gate is made. */
  env?: NodeJS.ProcessEnv;
  /** The folder Claude Code runs in, for calls whose input names none (default: the working folder when the gate is made). */
  cwd?: string;
}

/** Judges one of Claude Code's tool calls by name and input, as the CLI hook does (reads too need the session). Never throws. */
export function claudeToolJudge(o: ClaudeGateOptions): (toolName: string, input: unknown, cwd?: string) => ToolJudgement {
  const env = { ...(o.env ?? process.env) };
  const base = o.cwd ?? process.cwd();
  return (toolName, input, cwd) => {
    try {
      const read = readHookInput({ hook_event_name: "PreToolUse", tool_name: toolName, tool_input: input, cwd: cwd ?? base });
      if ("problem" in read) return { allow: false, reason: `twinlock: ${read.problem}; denied` };
      return judgeToolCall({ call: AGENT_CONTRACTS.claude.classify(read), env, home: o.home, bindReads: true });
    } catch (error) {
      return { allow: false, reason: `twinlock: judging ${toolName} failed (${(error as Error)?.message ?? error}); denied` };
    }
  };
}

/**
 * The `hooks` option for `query()`: a PreToolUse callback on every tool that
 * denies what the gate denies and otherwise says nothing (the user's own
 * rules decide). `onFailure: "block"`: should the callback ever fail, Claude
 * Code blocks the call rather than going ahead.
 */
export function gateHooks(o: ClaudeGateOptions): { PreToolUse: HookCallbackMatcher[] } {
  const judge = claudeToolJudge(o);
  return {
    PreToolUse: [
      {
        onFailure: "block",
        hooks: [
          async (input): Promise<HookJSONOutput> => {
            const i = input as { hook_event_name?: string; tool_name?: unknown; tool_input?: unknown; cwd?: unknown };
            const j =
              i.hook_event_name === "PreToolUse" && typeof i.tool_name === "string"
                ? judge(i.tool_name, i.tool_input, typeof i.cwd === "string" ? i.cwd : undefined)
                : { allow: false as const, reason: "twinlock: the hook input names no tool; denied" };
            if (j.allow) return {};
            return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: j.reason } };
          },
        ],
      },
    ],
  };
}

/**
 * A `canUseTool` for `query()`: denies what the gate denies, and otherwise
 * hands the call to `next` (the application's own prompt or policy), or
 * denies when there is none — the gate's allow is never a person's yes.
 */
export function gateCanUseTool(o: ClaudeGateOptions & { next?: CanUseTool }): CanUseTool {
  const judge = claudeToolJudge(o);
  return async (toolName, input, options) => {
    const j = judge(toolName, input);
    if (!j.allow) return { behavior: "deny", message: j.reason };
    if (o.next) return o.next(toolName, input, options);
    return {
      behavior: "deny",
      message: `twinlock: ${toolName} needs a person's permission, and the application gave no way to ask; denied`,
    };
  };
}

/**
 * The planner's tools as an in-process MCP server named `twinlock` (pass it in
 * `mcpServers: { twinlock: … }`): `twinlock_submit_handoff` (freeze) and
 * `twinlock_request_review` (wait for a person's decision), the names the
 * gate lets a planner's session call.
 */
export function plannerMcpServer(options: PlannerSource) {
  const session = sessionOf(options);
  const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
  return createSdkMcpServer({
    name: TWINLOCK_MCP_SERVER,
    version: "1.0.0",
    tools: [
      tool(
        "twinlock_submit_handoff",
        "Freeze your handoff folder: the gate copies and hashes every file, and a person reviews exactly these bytes. Returns the hash and revision.",
        { unchanged_because: z.string().max(2000).optional() },
        async ({ unchanged_because }) => {
          try {
            return text(JSON.stringify(await session.submitHandoff({ unchangedBecause: unchanged_because })));
          } catch (error) {
            return { ...text(refusalText(error)), isError: true };
          }
        },
      ),
      tool(
        "twinlock_request_review",
        "Wait until a person decides on the frozen revision. Returns approved, declined, or changes_requested with the reviewer's comments: then revise the handoff and submit it again.",
        {},
        async () => {
          try {
            return text(JSON.stringify(await session.waitForReview()));
          } catch (error) {
            return { ...text(refusalText(error)), isError: true };
          }
        },
      ),
    ],
  });
}
