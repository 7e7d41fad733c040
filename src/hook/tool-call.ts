/** What a tool call asks for, whatever agent tool sent it: the hook's one model of a call. */
export type ToolCall =
  /** Reads only: passes without a binding. */
  | { kind: "read"; tool: string }
  /** Writes the files named (resolved against `cwd`). */
  | { kind: "write"; tool: string; paths: string[]; cwd: string | null }
  /** Runs a shell command in `cwd`: `command` is what it runs, when the hook can read it as a POSIX shell would. */
  | { kind: "shell"; tool: string; cwd: string | null; command: ShellCommand | null }
  /** Calls out of the agent: MCP tools, subagents, the web. Scoped by the binding alone. */
  | { kind: "external"; tool: string }
  /** A tool the hook does not know (a new tool, or a name spelled otherwise): always denied. */
  | { kind: "unknown"; tool: string }
  /** A known tool whose input the hook cannot read exactly as the agent tool would (`reason` says why): always denied. */
  | { kind: "unreadable"; tool: string; reason: string };

/**
 * A shell call's command as the tool runs it: a command line a POSIX shell
 * reads (`text`), or a program and its arguments started without a shell
 * (`argv`). Null when the hook cannot say (PowerShell, typing into a
 * running command): only a session that passes every shell call lets it through.
 */
export type ShellCommand = { text: string } | { argv: string[] };

/** The parts of an agent tool's pre-tool-use input the hook reads. */
export interface HookInput {
  toolName: string;
  toolInput: Record<string, unknown>;
  cwd: string | null;
  eventName: string | null;
}
