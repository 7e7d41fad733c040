import os from "node:os";
import path from "node:path";
import type { AgentTool } from "./agent-tool.js";
import { STAND_INS_FOLDER } from "./stand-ins.js";

/**
 * The folder a tool keeps its own state in, which it writes as it runs
 * (sessions, logs, its databases, refreshed login tokens), and the entries
 * in it that are configuration: those stay read-only in the sandbox, so the
 * agent cannot switch the hook off, trust another hook or change the tool's
 * settings for a later run. Checked against Claude Code 2.1.328
 * (`$CLAUDE_CONFIG_DIR`, default `~/.claude`, and `~/.claude.json`),
 * Codex CLI 0.169.0 (`$CODEX_HOME`, default `~/.codex`) and Gemini CLI
 * 0.61.0 (`$GEMINI_CLI_HOME/.gemini`, default `~/.gemini`).
 */
export interface ToolState {
  dir: string;
  /** Whether an entry (a name directly in `dir`) is configuration, kept read-only. */
  isConfig(name: string): boolean;
  /**
   * The configuration files the tool reads when they are there, kept
   * read-only also when they are not there yet: exec puts an empty one (with
   * `content`) in their place for the session, so the sandbox can mount it
   * read-only, and removes it after. Else the agent could make one (a
   * `.env` with LD_PRELOAD that stops the hook in a later run).
   */
  configFiles: readonly { name: string; content: string }[];
  /**
   * Files outside `dir` (or in it) the tool both reads as configuration and
   * writes as it runs: each gets a private writable copy for the session,
   * mounted over it and thrown away after, so the tool runs as it would and
   * what the agent writes there reaches no later run. Claude Code's
   * `~/.claude.json` (its MCP servers, per-project permissions, counters).
   */
  privateCopies: readonly string[];
  /** The variable that moves the state folder, for a message. */
  variable: string;
}

const CODEX_CONFIG = new Set([".env", "config.toml", "hooks.json", "rules", "prompts", "skills", "hooks", "plugins", "agents", ".agents"]);
const GEMINI_CONFIG = new Set([
  "settings.json",
  "trustedFolders.json",
  ".env",
  "policies",
  "extensions",
  "commands",
  "agents",
  "skills",
  "hooks",
]);

/** An empty file of each name, as the tool reads it: `{}` for JSON. */
const empty = (names: readonly string[]) => names.map((name) => ({ name, content: name.endsWith(".json") ? "{}\n" : "" }));
// Codex loads $CODEX_HOME/.env into its environment and every process it starts (the hook's too).
const CODEX_FILES = empty([
  ".env",
  "config.toml",
  "hooks.json",
  "requirements.toml",
  "managed_config.toml",
  "AGENTS.md",
  "AGENTS.override.md",
]);
const GEMINI_FILES = empty([".env", "settings.json", "trustedFolders.json", "GEMINI.md"]);
// Claude Code's user settings (its hooks, permissions, MCP servers, status line), instructions and extensions.
const CLAUDE_CONFIG = new Set([
  "settings.json",
  "settings.local.json",
  "managed-settings.json",
  ".mcp.json",
  "keybindings.json",
  "commands",
  "agents",
  "skills",
  "hooks",
  "plugins",
  "output-styles",
  "rules",
]);
const CLAUDE_FILES = empty(["settings.json", "CLAUDE.md"]);

/** The state folder of `tool` for a process started with `env`. */
export function toolStateOf(tool: AgentTool, env: NodeJS.ProcessEnv): ToolState {
  const home = env.HOME || os.homedir();
  if (tool === "claude") {
    const dir = path.resolve(env.CLAUDE_CONFIG_DIR || path.join(home, ".claude"));
    return {
      dir,
      // Scripts beside the settings (a status line, a hook's helper) run outside any sandbox in a later session: read-only too.
      isConfig: (name) => name === STAND_INS_FOLDER || CLAUDE_CONFIG.has(name) || name.endsWith(".md") || name.endsWith(".sh"),
      configFiles: CLAUDE_FILES,
      privateCopies: [env.CLAUDE_CONFIG_DIR ? path.join(dir, ".claude.json") : path.resolve(home, ".claude.json")],
      variable: "CLAUDE_CONFIG_DIR",
    };
  }
  if (tool === "codex")
    return {
      dir: path.resolve(env.CODEX_HOME || path.join(home, ".codex")),
      // Every TOML file (config.toml, requirements.toml, managed_config.toml, the `-p NAME` profiles NAME.config.toml) and the instructions.
      isConfig: (name) =>
        name === STAND_INS_FOLDER || CODEX_CONFIG.has(name) || name.endsWith(".toml") || /^AGENTS(\.override)?\.md$/.test(name),
      configFiles: CODEX_FILES,
      privateCopies: [],
      variable: "CODEX_HOME",
    };
  return {
    dir: path.resolve(env.GEMINI_CLI_HOME || home, ".gemini"),
    isConfig: (name) => name === STAND_INS_FOLDER || GEMINI_CONFIG.has(name) || name.endsWith(".md") || name.endsWith(".toml"),
    configFiles: GEMINI_FILES,
    privateCopies: [],
    variable: "GEMINI_CLI_HOME",
  };
}
