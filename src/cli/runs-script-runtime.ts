import path from "node:path";
import { readFileHead } from "../sandbox/identify-agent-tool.js";
import { SCRIPT_RUNTIMES as RUNTIMES } from "../sandbox/script-runtimes.js";

/** Shells whose `-c STRING` is looked into for the program it starts first. */
const SHELLS = new Set(["sh", "bash", "dash", "zsh"]);

/**
 * Whether `cmd` starts a script runtime (`node agent.mjs`, or `sh -c "node
 * agent.mjs"`): an SDK agent, for which exec's and plan's note that no agent
 * CLI has a hook installed is noise. Only a note is chosen by this, never
 * what the gate allows.
 */
export function runsScriptRuntime(cmd: readonly string[]): boolean {
  return RUNTIMES.has(path.basename(programWords(cmd)[0] ?? ""));
}

/** The words of the program `cmd` starts: its own, or those of a shell's `-c STRING` (split on white space). */
function programWords(cmd: readonly string[]): readonly string[] {
  const program = path.basename(cmd[0] ?? "");
  return SHELLS.has(program) && cmd[1] === "-c" && typeof cmd[2] === "string" ? cmd[2].trim().split(/\s+/) : cmd;
}

/** How many bytes of an SDK agent's script are read to see whether it drives Claude Code. */
export const SCRIPT_HEAD_BYTES = 256 * 1024;
/** The imports that mean a script starts Claude Code (through the SDK, or twinlock's adapter over it). */
const CLAUDE_SDK_IMPORTS = ["twinlock/claude-agent-sdk", "@anthropic-ai/claude-agent-sdk"];

/**
 * Whether `cmd` runs a script (`node [options] SCRIPT`, also under `sh -c`)
 * whose first SCRIPT_HEAD_BYTES bytes name the Claude Agent SDK or
 * twinlock's adapter over it. The agent writes the script, so this only
 * spares the person a consent used up on a run that cannot work (exec
 * refuses it under --sandbox before admitting); it decides nothing the gate
 * allows, and the adapter's own refusal stays behind it. The script is read
 * as program identification reads one: never a FIFO (no wait), never through a link.
 */
export function scriptDrivesClaudeCode(cmd: readonly string[], cwd: string): boolean {
  const words = programWords(cmd);
  if (!RUNTIMES.has(path.basename(words[0] ?? ""))) return false;
  const script = words.slice(1).find((w) => !w.startsWith("-"));
  if (script === undefined) return false;
  const head = readFileHead(path.resolve(cwd, script), SCRIPT_HEAD_BYTES)?.toString("latin1") ?? "";
  return CLAUDE_SDK_IMPORTS.some((name) => head.includes(name));
}
