/** What a tool call asks for, whatever agent tool sent it: the hook's one model of a call. */
export type ToolCall =
  /** Reads only: passes without a binding. */
  | { kind: "read"; tool: string }
  /** Writes the files named (resolved against `cwd`). */
  | { kind: "write"; tool: string; paths: string[]; cwd: string | null }
  /** Runs a shell command in `cwd`. */
  | { kind: "shell"; tool: string; cwd: string | null }
  /** Calls out of the agent: MCP tools, subagents, the web. Scoped by the binding alone. */
  | { kind: "external"; tool: string }
  /** A tool the hook does not know (a new tool, or a name spelled otherwise): always denied. */
  | { kind: "unknown"; tool: string }
  /** A known tool whose input the hook cannot read exactly as the agent tool would (`reason` says why): always denied. */
  | { kind: "unreadable"; tool: string; reason: string };

/** The parts of an agent tool's pre-tool-use input the hook reads. */
export interface HookInput {
  toolName: string;
  toolInput: Record<string, unknown>;
  cwd: string | null;
  eventName: string | null;
}
