import path from "node:path";

/** Script runtimes an in-process SDK agent runs on: its tool calls are asked through an adapter, not an agent CLI's hook. */
const RUNTIMES = new Set(["node", "nodejs", "bun", "deno", "tsx"]);
/** Shells whose `-c STRING` is looked into for the program it starts first. */
const SHELLS = new Set(["sh", "bash", "dash", "zsh"]);

/**
 * Whether `cmd` starts a script runtime (`node agent.mjs`, or `sh -c "node
 * agent.mjs"`): an SDK agent, for which exec's and plan's note that no agent
 * CLI has a hook installed is noise. Only a note is chosen by this, never
 * what the gate allows.
 */
export function runsScriptRuntime(cmd: readonly string[]): boolean {
  const program = path.basename(cmd[0] ?? "");
  if (RUNTIMES.has(program)) return true;
  if (!SHELLS.has(program) || cmd[1] !== "-c" || typeof cmd[2] !== "string") return false;
  const first = cmd[2].trim().split(/\s+/, 1)[0] ?? "";
  return RUNTIMES.has(path.basename(first));
}
