import path from "node:path";
import { judgeToolCall, type ToolJudgement } from "../hook/judge-tool-call.js";
import type { ToolCall } from "../hook/tool-call.js";

/**
 * What one of the application's tools does, as the gate judges it (the hook's
 * ToolCall kinds): `"read"`, `"external"` (calls out of the agent: the web,
 * another service), `{ writes }` (the paths it writes, read from its input)
 * or `{ shell }` (the folder it runs a command in). A tool not listed is
 * denied, as the hook denies a tool it does not know.
 */
export type ToolScope =
  | "read"
  | "external"
  | { writes: (input: unknown) => string | readonly string[] }
  | { shell: (input: unknown) => { cwd?: string | null; command?: string | null } };

export interface ExecutorGateOptions {
  /** The gate home the session is bound in (`twinlock exec` sets TWINLOCK_HOME); named by the application, never read from a tool. */
  home: string;
  /** What each tool does, by the name the model calls it. */
  tools: Readonly<Record<string, ToolScope>>;
  /** The session's environment; by default a copy of process.env taken when the gate is made (a tool changing process.env later changes nothing). */
  env?: NodeJS.ProcessEnv;
  /** Relative paths are resolved against this folder (default: the working folder when the gate is made). */
  cwd?: string;
  /** The one executor this agent is (e.g. "MD-30"): a session of another prompt, or a planner's, is denied. */
  executor?: string;
}

/** The executor side of every adapter: judge one tool call by name and input. Never throws; never approves anything but a call. */
export interface ExecutorGate {
  judge(tool: string, input: unknown): ToolJudgement;
}

/**
 * An executor's gate for an in-process agent (SPEC §12): every call — reads
 * too — is allowed only while the session `twinlock exec` bound is verified
 * (the run admitted for this executor and unchanged since: no stop, close or
 * new revision; the checkout still the approved bytes), and a write only
 * inside the admitted actions' targets or the checkout, as the CLI hook
 * judges it (`judgeToolCall`). An error anywhere, the tool's scope function
 * included, denies.
 */
export function executorGate(o: ExecutorGateOptions): ExecutorGate {
  const env = { ...(o.env ?? process.env) };
  const cwd = o.cwd ?? process.cwd();
  const tools = { ...o.tools };
  const home = o.home;
  return {
    judge(tool, input) {
      try {
        if (o.executor !== undefined && env.TWINLOCK_EXECUTOR !== o.executor)
          return {
            allow: false,
            reason: `twinlock: ${tool} denied: this agent is executor ${o.executor}, and no session of ${o.executor} is bound here (start it with \`twinlock exec RUN ${o.executor} -- CMD\`)`,
          };
        return judgeToolCall({
          call: callOf(tool, input, Object.hasOwn(tools, tool) ? tools[tool] : undefined, cwd),
          env,
          home,
          bindReads: true,
        });
      } catch (error) {
        return { allow: false, reason: `twinlock: judging ${tool} failed (${(error as Error)?.message ?? error}); denied` };
      }
    },
  };
}

/** The hook's model of the call, from the tool's declared scope; a scope that throws or answers nonsense is unreadable (denied). */
function callOf(tool: string, input: unknown, scope: ToolScope | undefined, cwd: string): ToolCall {
  if (scope === undefined) return { kind: "unknown", tool };
  if (scope === "read") return { kind: "read", tool };
  if (scope === "external") return { kind: "external", tool };
  const unreadable = (reason: string): ToolCall => ({ kind: "unreadable", tool, reason });
  if ("writes" in scope) {
    let named: string | readonly string[];
    try {
      named = scope.writes(input);
    } catch (error) {
      return unreadable(`its paths cannot be read from its input (${(error as Error)?.message ?? error})`);
    }
    const paths = typeof named === "string" ? [named] : named;
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== "string")) return unreadable("its scope names no list of paths");
    return { kind: "write", tool, paths: [...paths], cwd };
  }
  if ("shell" in scope) {
    let where: { cwd?: string | null; command?: string | null };
    try {
      where = scope.shell(input);
    } catch (error) {
      return unreadable(`its folder cannot be read from its input (${(error as Error)?.message ?? error})`);
    }
    if (where === null || typeof where !== "object") return unreadable("its scope names no folder");
    const dir = typeof where.cwd === "string" ? path.resolve(cwd, where.cwd) : cwd;
    return { kind: "shell", tool, cwd: dir, command: typeof where.command === "string" ? { text: where.command } : null };
  }
  return unreadable("its scope is none the gate knows");
}
