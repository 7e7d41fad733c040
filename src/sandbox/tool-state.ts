import os from "node:os";
import path from "node:path";
import type { FailOpenTool } from "./agent-tool.js";

/**
 * The folder a tool keeps its own state in, which it writes as it runs
 * (sessions, logs, its databases, refreshed login tokens), and the entries
 * in it that are configuration: those stay read-only in the sandbox, so the
 * agent cannot switch the hook off, trust another hook or change the tool's
 * settings for a later run. Checked against Codex CLI 0.169.0
 * (`$CODEX_HOME`, default `~/.codex`) and Gemini CLI 0.61.0
 * (`$GEMINI_CLI_HOME/.gemini`, default `~/.gemini`).
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

/** The state folder of `tool` for a process started with `env`. */
export function toolStateOf(tool: FailOpenTool, env: NodeJS.ProcessEnv): ToolState {
  const home = env.HOME || os.homedir();
  if (tool === "codex")
    return {
      dir: path.resolve(env.CODEX_HOME || path.join(home, ".codex")),
      // Every TOML file (config.toml, requirements.toml, managed_config.toml, the `-p NAME` profiles NAME.config.toml) and the instructions.
      isConfig: (name) => CODEX_CONFIG.has(name) || name.endsWith(".toml") || /^AGENTS(\.override)?\.md$/.test(name),
      configFiles: CODEX_FILES,
    };
  return {
    dir: path.resolve(env.GEMINI_CLI_HOME || home, ".gemini"),
    isConfig: (name) => GEMINI_CONFIG.has(name) || name.endsWith(".md") || name.endsWith(".toml"),
    configFiles: GEMINI_FILES,
  };
}
