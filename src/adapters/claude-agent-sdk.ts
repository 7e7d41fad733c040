/**
 * `twinlock/claude-agent-sdk`: the gate inside the Claude Agent SDK
 * (`@anthropic-ai/claude-agent-sdk` 0.3.328, driving Claude Code 2.1.328).
 * The executor's every tool call goes through a PreToolUse hook callback
 * (and, for the calls Claude Code asks permission for, `canUseTool`) that
 * judges it as the CLI hook judges Claude Code's tools: a deny carries the
 * reason Claude Code shows the model. The planner gets an in-process MCP
 * server named `twinlock` with two tools: freeze the handoff, and wait for a
 * person's review. Nothing here answers `allow` for a person, reviews or consents:
 * an allowed call is left to the application's own permission rules.
 */
import { SANDBOX_ENV } from "../sandbox/sandbox-env.js";
import { ClaudeUnderSandboxError } from "./claude-under-sandbox-error.js";
import { endsUncaughtInOneLine, loadAdapter } from "./load-adapter.js";

export type { ClaudeGateOptions } from "./claude-agent-sdk-adapter.js";
export { ClaudeUnderSandboxError } from "./claude-under-sandbox-error.js";
export { type GateServerPlannerOptions, gateServerPlannerSession } from "./gate-server-planner-session.js";
export { MissingSdkError } from "./load-adapter.js";
export type { PlannerSession, PlannerSessionOptions, PlannerSource, ReviewOutcome } from "./planner-session.js";

// Refused before anything starts: under twinlock's sandbox Claude Code would hang, silent, until killed.
if (process.env[SANDBOX_ENV]) throw endsUncaughtInOneLine(new ClaudeUnderSandboxError());
// Loaded, not imported: a missing SDK is one clear line (see loadAdapter), not a failed ESM link.
const adapter = await loadAdapter("twinlock/claude-agent-sdk", () => import("./claude-agent-sdk-adapter.js"));

/** Judges one of Claude Code's tool calls by name and input, as the CLI hook does (reads too need the session). Never throws. */
export const claudeToolJudge = adapter.claudeToolJudge;
/**
 * The `hooks` option for `query()`: a PreToolUse callback on every tool that
 * denies what the gate denies and otherwise says nothing (the user's own
 * rules decide). `onFailure: "block"`: should the callback ever fail, Claude
 * Code blocks the call rather than going ahead.
 */
export const gateHooks = adapter.gateHooks;
/**
 * A `canUseTool` for `query()`: denies what the gate denies, and otherwise
 * hands the call to `next` (the application's own prompt or policy), or
 * denies when there is none — the gate's allow is never a person's yes.
 */
export const gateCanUseTool = adapter.gateCanUseTool;
/**
 * The planner's tools as an in-process MCP server named `twinlock` (pass it in
 * `mcpServers: { twinlock: … }`): `twinlock_submit_handoff` (freeze) and
 * `twinlock_request_review` (wait for a person's decision), the names the
 * gate lets a planner's session call.
 */
export const plannerMcpServer = adapter.plannerMcpServer;
