import path from "node:path";
import { findDuplicateJsonKey } from "../input/duplicate-json-key.js";
import { applyPatchPaths } from "./apply-patch-paths.js";
import type { HookInput, ShellCommand, ToolCall } from "./tool-call.js";

/** The agent tools whose pre-tool-use hook twinlock speaks. */
export const AGENTS = ["claude", "codex", "gemini", "cursor"] as const;
export type Agent = (typeof AGENTS)[number];

/** What the hook prints and how it exits. */
export interface HookAnswer {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * One agent tool's documented hook contract (docs/agent-hooks in the README):
 * how its tools map to kinds of call, its deny answer, and its answer for a
 * call the hook lets through — never an `allow` that would override the
 * user's own ask/deny rules where the tool offers a neutral answer.
 */
export interface AgentContract {
  /** The call a tool name and its input ask for. Names match exactly: `write` or `Write ` is unknown. */
  classify(input: HookInput): ToolCall;
  deny(reason: string): HookAnswer;
  pass(): HookAnswer;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const paths = (...values: unknown[]): string[] => values.filter((v): v is string => typeof v === "string");
/** A shell tool's command line (a string), when it gives one. */
const commandText = (v: unknown): ShellCommand | null => (typeof v === "string" ? { text: v } : null);
/** The command line of a tool that may name it in either of two fields: none when both are given (the hook could judge one while the tool runs the other). */
const oneCommandText = (a: unknown, b: unknown): ShellCommand | null => (a !== undefined && b !== undefined ? null : commandText(a ?? b));
/** Codex's `shell` command: an argv array (`["bash", "-lc", "ls"]`), read as the tool starts it. */
const commandArgv = (v: unknown): ShellCommand | null =>
  Array.isArray(v) && v.length > 0 && v.every((a) => typeof a === "string") ? { argv: v as string[] } : commandText(v);

/** Claude Code and Codex share a wire format (`hookSpecificOutput.permissionDecision`). */
function claudeStyleDeny(reason: string): HookAnswer {
  return {
    stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } })}\n`,
    stderr: "",
    exitCode: 0,
  };
}
/** Exit 0 and no output: no decision, so the user's own permission rules decide. */
const SILENT: HookAnswer = { stdout: "", stderr: "", exitCode: 0 };

/**
 * Claude Code's tools that only read or keep the session's own notes (checked
 * against the tool list 2.1.328 sends its model, and its documented tools):
 * they pass. Every call reaches the hook (HOOK_MATCHERS), so a tool in no
 * list here is unknown, and denied.
 */
const CLAUDE_READ = new Set([
  "Read",
  "Glob",
  "Grep",
  "LS",
  "NotebookRead",
  "TodoWrite",
  "TodoRead",
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskUpdate",
  "ExitPlanMode",
  "EnterPlanMode",
  "AskUserQuestion",
  "BashOutput",
  "ToolSearch",
  "ListAgents",
]);
/** Claude Code's tools that reach outside the agent (the web, subagents, skills and workflows that run tools of their own, background shells): a bound session. */
const CLAUDE_EXTERNAL = new Set([
  "WebFetch",
  "WebSearch",
  "Task",
  "Agent",
  "TaskOutput",
  "TaskStop",
  "KillShell",
  "KillBash",
  "Skill",
  "Workflow",
  "SendMessage",
  "ScheduleWakeup",
]);

function classifyClaude({ toolName: t, toolInput: i, cwd }: HookInput): ToolCall {
  if (CLAUDE_READ.has(t)) return { kind: "read", tool: t };
  if (t === "Write" || t === "Edit" || t === "MultiEdit") return { kind: "write", tool: t, paths: paths(i.file_path), cwd };
  if (t === "NotebookEdit") return { kind: "write", tool: t, paths: paths(i.notebook_path), cwd };
  if (t === "Bash") return { kind: "shell", tool: t, cwd, command: commandText(i.command) };
  if (t === "PowerShell") return { kind: "shell", tool: t, cwd, command: null };
  if (t.startsWith("mcp__") || CLAUDE_EXTERNAL.has(t)) return { kind: "external", tool: t };
  return { kind: "unknown", tool: t };
}

/** The names Codex's shell tool runs its patch tool by. */
const APPLY_PATCH_COMMANDS = new Set(["apply_patch", "applypatch"]);

/** A Codex patch as a write of the files it names, or unreadable. */
function patchCall(tool: string, patch: string, cwd: string | null): ToolCall {
  const read = applyPatchPaths(patch);
  if ("problem" in read) return { kind: "unreadable", tool, reason: read.problem };
  return { kind: "write", tool, paths: read.paths, cwd };
}

/** The folder a command runs in: `workdir` (resolved against the session's `cwd` when relative), else `cwd`. */
function withWorkdir(cwd: string | null, workdir: string | undefined): string | null {
  if (workdir === undefined) return cwd;
  // Left as written when it starts with ~: the hook denies that by itself.
  return cwd === null || workdir.startsWith("~") ? workdir : path.resolve(cwd, workdir);
}

/** Codex's own tools that only read or keep the session's notes (0.169.0's tool list): they pass. */
const CODEX_READ = new Set(["view_image", "request_user_input", "get_goal", "create_goal", "update_goal", "tool_search", "update_plan"]);

function classifyCodex(input: HookInput): ToolCall {
  const { toolName: t, toolInput: i, cwd } = input;
  if (t === "apply_patch") {
    // One patch only: with two fields the hook could judge one while the tool applies the other.
    const given = [i.command, i.patch, i.input].filter((v) => v !== undefined);
    if (given.length > 1)
      return { kind: "unreadable", tool: t, reason: "the patch is given in more than one field (command, patch, input)" };
    return patchCall(t, str(given[0]) ?? "", cwd);
  }
  // Codex runs `shell` and `exec_command` in their `workdir` when given (relative to the session's folder).
  const workdir = withWorkdir(cwd, str(i.workdir));
  // `["apply_patch", PATCH]` through the shell tool is Codex's own way to write files: judged as the patch it is.
  if ((t === "shell" || t === "exec_command") && Array.isArray(i.command) && APPLY_PATCH_COMMANDS.has(String(i.command[0])))
    return i.command.length === 2 && typeof i.command[1] === "string"
      ? patchCall(t, i.command[1], workdir)
      : { kind: "unreadable", tool: t, reason: "apply_patch is run with other than one patch argument" };
  if (t === "Bash") return { kind: "shell", tool: t, cwd: workdir, command: commandText(i.command) };
  if (t === "shell") return { kind: "shell", tool: t, cwd: workdir, command: commandArgv(i.command) };
  // exec_command runs `cmd` through a shell (`shell`, the user's by default): read as a command line only with none named.
  if (t === "exec_command")
    return { kind: "shell", tool: t, cwd: workdir, command: i.shell === undefined ? oneCommandText(i.cmd, i.command) : null };
  // Typing into a command already running is running a command: a bound session, as the command needed.
  if (t === "write_stdin") return { kind: "shell", tool: t, cwd, command: null };
  if (CODEX_READ.has(t)) return { kind: "read", tool: t };
  if (t === "web_search") return { kind: "external", tool: t };
  return classifyClaude(input);
}

/** Gemini CLI's tools that only read or keep the session's notes (0.61.0's tool list): they pass. */
const GEMINI_READ = new Set([
  "read_file",
  "read_many_files",
  "glob",
  "search_file_content",
  "grep_search",
  "list_directory",
  "write_todos",
  "update_topic",
  "enter_plan_mode",
  "exit_plan_mode",
  "list_background_processes",
  "read_background_output",
]);
/** Gemini CLI's tools that reach outside the agent (the web, subagents, skills): a bound session. */
const GEMINI_EXTERNAL = new Set(["web_fetch", "google_web_search", "invoke_agent", "activate_skill"]);

function classifyGemini({ toolName: t, toolInput: i, cwd }: HookInput): ToolCall {
  if (GEMINI_READ.has(t)) return { kind: "read", tool: t };
  if (t === "write_file" || t === "replace") return { kind: "write", tool: t, paths: paths(i.file_path), cwd };
  // `dir_path` (`directory` in older versions), relative to the session's folder.
  if (t === "run_shell_command")
    return { kind: "shell", tool: t, cwd: withWorkdir(cwd, str(i.dir_path) ?? str(i.directory)), command: commandText(i.command) };
  // save_memory writes the user's memory file outside the project, read by every later session: a write there.
  if (t === "save_memory") return { kind: "write", tool: t, paths: ["~/.gemini/GEMINI.md"], cwd };
  if (t.startsWith("mcp_") || GEMINI_EXTERNAL.has(t)) return { kind: "external", tool: t };
  return { kind: "unknown", tool: t };
}

const CURSOR_READ = new Set(["Read", "Grep", "Glob", "LS", "SemanticSearch", "ReadLints", "TodoWrite"]);

function classifyCursor({ toolName: t, toolInput: i, cwd, eventName }: HookInput): ToolCall {
  // Cursor's older per-kind events carry no tool name of their own.
  if (eventName === "beforeShellExecution") return { kind: "shell", tool: "Shell", cwd, command: commandText(i.command) };
  if (eventName === "beforeMCPExecution") return { kind: "external", tool: `MCP:${t}` };
  if (CURSOR_READ.has(t)) return { kind: "read", tool: t };
  if (t === "Write" || t === "Edit" || t === "StrReplace" || t === "Delete" || t === "MultiEdit")
    return { kind: "write", tool: t, paths: paths(i.file_path, i.path), cwd };
  if (t === "Shell") return { kind: "shell", tool: t, cwd: withWorkdir(cwd, str(i.cwd)), command: commandText(i.command) };
  if (t.startsWith("MCP:") || t.startsWith("mcp__") || t === "Task" || t === "WebFetch" || t === "WebSearch")
    return { kind: "external", tool: t };
  return { kind: "unknown", tool: t };
}

/** The four contracts, one row each: adding an agent tool is adding a row. */
export const AGENT_CONTRACTS: Record<Agent, AgentContract> = {
  claude: { classify: classifyClaude, deny: claudeStyleDeny, pass: () => SILENT },
  // Codex enforces only deny, block or exit 2; allow/ask would fail open, so a pass says nothing.
  codex: { classify: classifyCodex, deny: claudeStyleDeny, pass: () => SILENT },
  gemini: {
    classify: classifyGemini,
    deny: (reason) => ({ stdout: `${JSON.stringify({ decision: "deny", reason })}\n`, stderr: "", exitCode: 0 }),
    // Gemini parses stdout as JSON on exit 0: an empty object decides nothing.
    pass: () => ({ stdout: "{}\n", stderr: "", exitCode: 0 }),
  },
  cursor: {
    classify: classifyCursor,
    deny: (reason) => ({
      stdout: `${JSON.stringify({ permission: "deny", user_message: reason, agent_message: reason })}\n`,
      stderr: "",
      exitCode: 0,
    }),
    // Cursor's hooks must answer (with failClosed, silence is a failure) and preToolUse has no neutral
    // answer: `allow` there lets the call go on to Cursor's own approval settings. See README.
    pass: () => ({ stdout: `${JSON.stringify({ permission: "allow" })}\n`, stderr: "", exitCode: 0 }),
  },
};

/** The agent named on the command line, or undefined. */
export function agentNamed(name: string | undefined): Agent | undefined {
  return (AGENTS as readonly string[]).includes(name ?? "") ? (name as Agent) : undefined;
}

/**
 * The hook input from an agent tool's stdin JSON, or a reason it is not one.
 * Claude Code, Codex, Gemini CLI and Cursor's preToolUse send `tool_name`,
 * `tool_input` and `cwd`; Cursor's beforeShellExecution sends `command`
 * and `cwd`, and beforeMCPExecution `tool_input` as a JSON string.
 */
export function readHookInput(value: unknown): HookInput | { problem: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: "the hook input is not a JSON object" };
  const v = value as Record<string, unknown>;
  const eventName = str(v.hook_event_name) ?? null;
  const cwd = str(v.cwd) ?? (Array.isArray(v.workspace_roots) ? str(v.workspace_roots[0]) : undefined) ?? null;
  if (eventName === "beforeShellExecution") return { toolName: "Shell", toolInput: { command: v.command }, cwd, eventName };
  const toolName = str(v.tool_name);
  if (toolName === undefined) return { problem: "the hook input names no tool_name" };
  let toolInput = v.tool_input;
  if (typeof toolInput === "string") {
    try {
      toolInput = JSON.parse(toolInput);
    } catch {
      return { problem: "the hook input's tool_input is not JSON" };
    }
    // The same rule as for the input around it: a key given twice may be read as either.
    const duplicate = findDuplicateJsonKey(v.tool_input as string);
    if (duplicate !== undefined) return { problem: `the hook input's tool_input has the key ${duplicate} twice` };
  }
  if (toolInput === undefined) toolInput = {};
  if (typeof toolInput !== "object" || toolInput === null || Array.isArray(toolInput))
    return { problem: "the hook input's tool_input is not an object" };
  return { toolName, toolInput: toolInput as Record<string, unknown>, cwd, eventName };
}
