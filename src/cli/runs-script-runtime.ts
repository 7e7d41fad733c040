import { closeSync, openSync, readSync } from "node:fs";
import path from "node:path";
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
  const program = path.basename(cmd[0] ?? "");
  if (RUNTIMES.has(program)) return true;
  if (!SHELLS.has(program) || cmd[1] !== "-c" || typeof cmd[2] !== "string") return false;
  const first = cmd[2].trim().split(/\s+/, 1)[0] ?? "";
  return RUNTIMES.has(path.basename(first));
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
 * allows, and the adapter's own refusal stays behind it.
 */
export function scriptDrivesClaudeCode(cmd: readonly string[], cwd: string): boolean {
  let words: readonly string[] = cmd;
  const program = path.basename(cmd[0] ?? "");
  if (SHELLS.has(program) && cmd[1] === "-c" && typeof cmd[2] === "string") words = cmd[2].trim().split(/\s+/);
  if (!RUNTIMES.has(path.basename(words[0] ?? ""))) return false;
  const script = words.slice(1).find((w) => !w.startsWith("-"));
  if (script === undefined) return false;
  const head = readHead(path.resolve(cwd, script));
  return CLAUDE_SDK_IMPORTS.some((name) => head.includes(name));
}

function readHead(file: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const buf = Buffer.alloc(SCRIPT_HEAD_BYTES);
    const n = readSync(fd, buf, 0, SCRIPT_HEAD_BYTES, 0);
    return buf.subarray(0, n).toString("latin1");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
