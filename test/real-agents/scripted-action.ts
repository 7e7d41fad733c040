/**
 * The one tool call a scripted model asks the agent CLI to make, said apart
 * from any tool's names: each protocol's responder turns it into that CLI's
 * own tool (Claude Code `Write`/`Edit`/`Bash`, Codex `apply_patch`/shell,
 * Gemini CLI `write_file`/`replace`/`run_shell_command`).
 */
export type ScriptedAction =
  | { kind: "write"; file: string; content: string }
  | { kind: "edit"; file: string; oldText: string; newText: string }
  | { kind: "shell"; file: string; content: string }
  /** Codex only: an `apply_patch` adding `file` (outside the project) with one line of `spaces` spaces before an `x` (issue 24 finding 3). */
  | { kind: "crafted-patch"; file: string; spaces: number }
  /**
   * Claude Code and Gemini CLI: a call outward by `tool` (a subagent, a web fetch or search; Gemini's save_memory,
   * which writes its memory file), which needs a bound session or is denied (issue 24 finding 4); `file` is never made.
   */
  | { kind: "outward"; file: string; url: string; tool: OutwardTool }
  /** Claude Code only: `count` Reads of `file` (which holds EDIT_BEFORE), each asked of the hook: what a read costs. */
  | { kind: "reads"; file: string; count: number }
  /**
   * The planner's freeze through twinlock's stdio MCP server, registered as `twinlock`: `twinlock_submit_handoff`
   * for `planner`'s handoff folder `handoffDir` (relative to the run file's folder); `file` is the run file.
   */
  | { kind: "freeze"; file: string; planner: string; handoffDir: string };

/** The tools an outward call is made by: Claude Code's subagent (`Agent`, once `Task`), web fetch and search; Gemini CLI's. */
export const OUTWARD_TOOLS = {
  claude: ["Agent", "WebFetch", "WebSearch"],
  gemini: ["web_fetch", "google_web_search", "save_memory"],
} as const;
export type OutwardTool = (typeof OUTWARD_TOOLS)[keyof typeof OUTWARD_TOOLS][number];

/** The three kinds of call every tool is driven through. */
export const ACTION_KINDS = ["write", "edit", "shell"] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

/** The text the scripted model ends with once the tool's result came back. */
export const FINAL_TEXT = "scripted model: done";

/** The file an edit starts from, written into the project before the run. */
export const EDIT_BEFORE = "before the edit\n";

/** Every kind of scripted call: the three every tool makes, and Codex's crafted patch. */
export type AnyActionKind = ActionKind | "crafted-patch" | "outward" | "reads" | "freeze";

/** How many Reads the `reads` action makes. */
export const READS = 10;

/** Where the outward call points: a loopback port nothing listens on, so nothing leaves the machine. */
export const OUTWARD_URL = "http://127.0.0.1:9/page";

/** Spaces in the crafted patch's long line: the hook's quadratic trim of it takes well past Codex's 10 s timeout. */
export const CRAFTED_SPACES = 200_000;

/**
 * The call of `kind` on a file in the project (`file` is absolute): a write
 * creates it, an edit turns EDIT_BEFORE into new text, a shell command
 * creates it with `printf` (a path with no quote or space in it); an outward
 * call is made by `outward`.
 */
export function actionOf(kind: AnyActionKind, file: string, outward: OutwardTool = "Agent"): ScriptedAction {
  if (kind === "crafted-patch") return { kind, file, spaces: CRAFTED_SPACES };
  if (kind === "outward") return { kind, file, url: OUTWARD_URL, tool: outward };
  if (kind === "reads") return { kind, file, count: READS };
  if (kind === "freeze") return { kind, file, planner: "MD-29", handoffDir: "handoff" };
  if (kind === "write") return { kind, file, content: "written by the scripted model\n" };
  if (kind === "edit") return { kind, file, oldText: "before the edit", newText: "after the edit" };
  return { kind, file, content: "written by a shell command" };
}

/** The MCP tool a freeze calls, as each tool names it to the model it ends with (`mcp__twinlock__…`, `mcp_twinlock_…`). */
export const FREEZE_TOOL = "twinlock_submit_handoff";

/** The freeze's arguments, as the MCP tool takes them. */
export function freezeArgs(action: Extract<ScriptedAction, { kind: "freeze" }>): Record<string, unknown> {
  return { planner: action.planner, handoff_dir: action.handoffDir };
}

/** The shell command line of a shell action. */
export function shellLine(action: Extract<ScriptedAction, { kind: "shell" }>): string {
  return `printf '%s\\n' '${action.content}' > ${action.file}`;
}

/** The file's content once the action was done. */
export function doneContent(action: ScriptedAction): string {
  if (action.kind === "write") return action.content;
  if (action.kind === "edit") return `${action.newText}\n`;
  if (action.kind === "crafted-patch") return `${" ".repeat(action.spaces)}x\n`;
  if (action.kind === "outward") return "";
  if (action.kind === "reads") return EDIT_BEFORE;
  if (action.kind === "freeze") throw new Error("a freeze is done when the run records it, not by a file's content");
  return `${action.content}\n`;
}
