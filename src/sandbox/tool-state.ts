import { realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AgentTool } from "./agent-tool.js";

/**
 * How the sandbox leaves one entry of a tool's state folder (a path relative to it):
 * - `folder`: writable with everything in it (made, empty, when not there);
 * - `file`: writable in place when it is there as a file (else not made, so a name the tool would create stays
 *   uncreatable, unless `make`: made empty, for one the tool cannot run without);
 * - `private`: an empty private folder mounted over it for the session, thrown away after (made, empty, when not there):
 *   what the tool writes there (shell snapshots and environment files it sources, backups it restores) reaches no later session;
 * - `read-only`: a folder inside a `folder` entry kept read-only (made, empty, when not there), such as Claude Code's memory.
 */
export interface RuntimeEntry {
  path: string;
  how: "folder" | "file" | "private" | "read-only";
  make?: boolean;
}

/**
 * The folder a tool keeps its own state in, and the entries in it it really
 * writes as it runs. Deny by default: inside the sandbox the whole folder is
 * read-only but for the runtime entries of the allow-list (sessions and
 * transcripts, logs, todos, telemetry caches, its databases), none of which
 * a later session runs or reads as instructions; every other entry (its
 * settings, hooks, scripts, skills, extensions, memory, credentials), every
 * unknown one and every new name the tool would make stays read-only, so the
 * agent cannot plant what runs unsandboxed in the person's next session.
 * Measured on the real Claude Code 2.1.328 (`$CLAUDE_CONFIG_DIR`, default
 * `~/.claude`, and `~/.claude.json`), Codex CLI 0.169.0 (`$CODEX_HOME`,
 * default `~/.codex`) and Gemini CLI 0.61.0 (`$GEMINI_CLI_HOME/.gemini`,
 * default `~/.gemini`): one headless session each with a new HOME, and what
 * it wrote there.
 */
export interface ToolState {
  dir: string;
  /** The runtime entries for a session in `cwd`, given the names now in `dir`; everything else stays read-only. */
  runtime(names: readonly string[], cwd: string): RuntimeEntry[];
  /**
   * The configuration files the tool reads when they are there, kept
   * read-only also when they are not there yet: exec puts an empty one (with
   * `content`) in their place for the session and removes it after.
   */
  configFiles: readonly { name: string; content: string }[];
  /**
   * Files outside `dir` (or in it) the tool both reads as configuration and
   * writes as it runs: each gets a private writable copy for the session,
   * mounted over it and thrown away after, so the tool runs as it would and
   * what the agent writes there reaches no later run. Claude Code's
   * `~/.claude.json` (its MCP servers, per-project permissions, counters),
   * Gemini CLI's `projects.json` (which project keeps its chats where): in a
   * private top level, a plain copy there.
   */
  privateCopies: readonly string[];
  /**
   * Whether the folder's top level is private to the session: a new name the tool makes there (a lock, a file
   * renamed over another) lands in a private folder mounted over it and is thrown away after; every entry it had is
   * there again read-only (the runtime entries writable). Gemini CLI locks `projects.json` and replaces it by a
   * file renamed over it, beside it. Elsewhere a new name at the top level is refused.
   */
  privateTop: boolean;
  /** The variable that moves the state folder, for a message. */
  variable: string;
}

const entries = (how: RuntimeEntry["how"], names: readonly string[]): RuntimeEntry[] => names.map((p) => ({ path: p, how }));

/** Claude Code: what it writes while it runs, and what it sources or restores (private). Not `plans`, `tasks`, `ide`, `plugins`. */
const CLAUDE_FOLDERS = ["todos", "statsig", "telemetry", "debug", "sessions", "paste-cache", "image-cache"];
const CLAUDE_PRIVATE = ["shell-snapshots", "session-env", "backups", "file-history"];
const CLAUDE_FILES = ["history.jsonl"];

/**
 * Claude Code's folder for the project in `cwd` under `projects` (its transcripts `*.jsonl`, each session's
 * subagents and tool results): the path with every character but a letter or digit turned into `-`. One over 200
 * characters gets a hash Claude Code computes its own way: none then (the transcript is not kept; fail closed).
 */
export function claudeProjectFolder(cwd: string): string | undefined {
  const slug = cwd.replace(/[^a-zA-Z0-9]/g, "-");
  return slug.length <= 200 ? slug : undefined;
}

/**
 * Codex: its transcripts, logs and databases (not `memories_*.sqlite`, which a later session turns into memory);
 * private: the shell snapshots it sources, and `tmp`, where it links the programs it puts on the shell's PATH.
 */
const CODEX_FOLDERS = ["sessions", "archived_sessions", "log", "thread-writer-locks"];
const CODEX_PRIVATE = ["shell_snapshots", ".tmp", "tmp"];
const CODEX_DATABASE = /^(state|logs|goals|queue|thread_history)_[0-9]{1,4}\.sqlite(-wal|-shm)?$/;

/** Gemini CLI: `tmp` (each project's chats and logs) but `tmp/bin` (the ripgrep it runs), and `history` (shadow git repositories git runs in). */
const GEMINI_FILES = new Set(["installation_id", "user_id"]);

/** An empty file of each name, as the tool reads it: `{}` for JSON. */
const empty = (names: readonly string[]) => names.map((name) => ({ name, content: name.endsWith(".json") ? "{}\n" : "" }));
// Codex loads $CODEX_HOME/.env into its environment and every process it starts (the hook's too).
const CODEX_STAND_INS = empty([
  ".env",
  "config.toml",
  "hooks.json",
  "requirements.toml",
  "managed_config.toml",
  "AGENTS.md",
  "AGENTS.override.md",
]);
const GEMINI_STAND_INS = empty([".env", "settings.json", "trustedFolders.json", "GEMINI.md"]);
const CLAUDE_STAND_INS = empty(["settings.json", "CLAUDE.md"]);

/** The state folder of `tool` for a process started with `env`. */
export function toolStateOf(tool: AgentTool, env: NodeJS.ProcessEnv): ToolState {
  const home = env.HOME || os.homedir();
  if (tool === "claude") {
    const dir = path.resolve(env.CLAUDE_CONFIG_DIR || path.join(home, ".claude"));
    return {
      dir,
      runtime: (names, cwd) => {
        // The project's folder (for the working folder as named and as its real path), its memory read-only.
        const projects = [...new Set([cwd, realOr(cwd)].map(claudeProjectFolder))].filter((f) => f !== undefined);
        return [
          ...entries("folder", CLAUDE_FOLDERS),
          ...entries("private", CLAUDE_PRIVATE),
          ...entries(
            "file",
            CLAUDE_FILES.filter((n) => names.includes(n)),
          ),
          ...projects.flatMap((f) => [
            { path: `projects/${f}`, how: "folder" as const },
            { path: `projects/${f}/memory`, how: "read-only" as const },
          ]),
        ];
      },
      configFiles: CLAUDE_STAND_INS,
      privateCopies: [env.CLAUDE_CONFIG_DIR ? path.join(dir, ".claude.json") : path.resolve(home, ".claude.json")],
      privateTop: false,
      variable: "CLAUDE_CONFIG_DIR",
    };
  }
  if (tool === "codex")
    return {
      dir: path.resolve(env.CODEX_HOME || path.join(home, ".codex")),
      runtime: (names) => [
        ...entries("folder", CODEX_FOLDERS),
        ...entries("private", CODEX_PRIVATE),
        // Codex does not start without its installation_id (a random identifier it writes once).
        { path: "installation_id", how: "file", make: true },
        ...entries(
          "file",
          names.filter((n) => n === "history.jsonl" || CODEX_DATABASE.test(n)),
        ),
      ],
      configFiles: CODEX_STAND_INS,
      privateCopies: [],
      privateTop: false,
      variable: "CODEX_HOME",
    };
  const dir = path.resolve(env.GEMINI_CLI_HOME || home, ".gemini");
  return {
    dir,
    runtime: (names) => [
      { path: "tmp", how: "folder" },
      { path: "tmp/bin", how: "read-only" },
      { path: "history", how: "private" },
      ...entries(
        "file",
        names.filter((n) => GEMINI_FILES.has(n)),
      ),
    ],
    configFiles: GEMINI_STAND_INS,
    privateCopies: [path.join(dir, "projects.json")],
    privateTop: true,
    variable: "GEMINI_CLI_HOME",
  };
}

/** The real path of `p`, or `p` when it has none. */
function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
