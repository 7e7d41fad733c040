import { closeSync, lstatSync, openSync, readdirSync, readSync, realpathSync } from "node:fs";
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
 * - `read-only`: a folder inside a `folder` or `private` entry kept read-only (made, empty, when not there), such as
 *   Claude Code's memory or the ripgrep Gemini CLI runs from its private `tmp`;
 * - `copy`: a private copy of the file (when it is there as a file) mounted over it for the session, thrown away after:
 *   the tool reads and writes it as it would, and what the agent writes there (a database a later session acts on)
 *   reaches no later session.
 */
export interface RuntimeEntry {
  path: string;
  how: "folder" | "file" | "private" | "read-only" | "copy";
  make?: boolean;
}

/**
 * The folder a tool keeps its own state in, and the entries in it it really
 * writes as it runs. Deny by default: inside the sandbox the whole folder is
 * read-only but for the runtime entries of the allow-list. What a later
 * session acts on is private to the session (copies or empty folders thrown
 * away after: Codex's databases, Gemini CLI's `tmp` but each project's chats
 * and logs, prompt histories, shell snapshots); what stays writable is the
 * session's own record (transcripts and rollouts, todos, logs, telemetry),
 * which a later session reads back only when the person resumes that
 * session (or, Claude Code's `--continue`, the latest of the project): then
 * it continues the confined agent's conversation, as the agent left it
 * (SECURITY.md, The state folder). Every other entry (its
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
   * In a private top level (`privateTop`), the configuration files the tool reads when they are there: one not there
   * is kept uncreatable for the session too (an empty one of `content`, read-only, in the private top level; nothing
   * is made in `dir`). Elsewhere a new name at the top level is refused already.
   */
  sealed: readonly { name: string; content: string }[];
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
  /**
   * What a private copy starts as, given the file's content (`{}` when there is none) and the session's working
   * folder: Gemini CLI's `projects.json` names the project's folder under `tmp` the sandbox keeps writable.
   */
  seedCopy?: (file: string, content: string, cwd: string) => string;
  /** The variable that moves the state folder, for a message. */
  variable: string;
}

const entries = (how: RuntimeEntry["how"], names: readonly string[]): RuntimeEntry[] => names.map((p) => ({ path: p, how }));

/** Claude Code: what it writes while it runs, and what it sources or restores (private). Not `plans`, `tasks`, `ide`, `plugins`. */
const CLAUDE_FOLDERS = ["todos", "statsig", "telemetry", "debug", "sessions", "paste-cache", "image-cache"];
const CLAUDE_PRIVATE = ["shell-snapshots", "session-env", "backups", "file-history"];
/** Its prompt history (recalled, and sent again by the person with a key): a private copy. */
const CLAUDE_COPIES = ["history.jsonl"];

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
 * Codex: its transcripts (rollouts) and logs; private: the shell snapshots it sources, and `tmp`, where it links the
 * programs it puts on the shell's PATH; a private copy: its databases, whose content a later session acts on
 * (`goals_*`: a thread's active goal it continues toward; `queue_*`: queued user input; `state_*`: agent jobs'
 * instructions, dynamic tools, the remote-control websocket URL; `thread_history_*`, `logs_*`), and `history.jsonl`
 * (the prompts the person recalls). Not `memories_*.sqlite`, which a later session turns into memory.
 */
const CODEX_FOLDERS = ["sessions", "archived_sessions", "log", "thread-writer-locks"];
const CODEX_PRIVATE = ["shell_snapshots", ".tmp", "tmp"];
const CODEX_DATABASE = /^(state|logs|goals|queue|thread_history)_[0-9]{1,4}\.sqlite(-wal|-shm)?$/;

/**
 * Gemini CLI: `tmp` is private to the session (it loads `tmp/<project>/memory` — MEMORY.md, GEMINI.md, skills, an
 * inbox — into every session's system prompt, and keeps the project's prompt log and checkpoints there) but the
 * project's `chats` and `logs`, writable, and `tmp/bin` (the ripgrep it runs), read-only; `history` (shadow git
 * repositories git runs in) private.
 */
const GEMINI_FILES = new Set(["installation_id", "user_id"]);

/** An empty file of each name, as the tool reads it: `{}` for JSON. */
const empty = (names: readonly string[]) => names.map((name) => ({ name, content: name.endsWith(".json") ? "{}\n" : "" }));
/** What Gemini CLI reads from its top level as configuration and environment (`.env` goes into every process it starts). */
const GEMINI_SEALED = empty([".env", "settings.json", "trustedFolders.json", "GEMINI.md"]);

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
            "copy",
            CLAUDE_COPIES.filter((n) => names.includes(n)),
          ),
          ...projects.flatMap((f) => [
            { path: `projects/${f}`, how: "folder" as const },
            { path: `projects/${f}/memory`, how: "read-only" as const },
          ]),
        ];
      },
      sealed: [],
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
          "copy",
          names.filter((n) => n === "history.jsonl" || CODEX_DATABASE.test(n)),
        ),
      ],
      sealed: [],
      privateCopies: [],
      privateTop: false,
      variable: "CODEX_HOME",
    };
  const dir = path.resolve(env.GEMINI_CLI_HOME || home, ".gemini");
  return {
    dir,
    runtime: (names, cwd) => {
      const project = geminiProject(dir, cwd);
      return [
        { path: "tmp", how: "private" },
        { path: "tmp/bin", how: "read-only" },
        { path: `tmp/${project}/chats`, how: "folder" },
        { path: `tmp/${project}/logs`, how: "folder" },
        { path: "history", how: "private" },
        ...entries(
          "file",
          names.filter((n) => GEMINI_FILES.has(n)),
        ),
      ];
    },
    sealed: GEMINI_SEALED,
    privateCopies: [path.join(dir, "projects.json")],
    seedCopy: (file, content, cwd) =>
      path.basename(file) === "projects.json" ? withProject(content, realOr(path.resolve(cwd)), geminiProject(dir, cwd)) : content,
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

/** The most of `projects.json`, of a `.project_root` and of the entries of `tmp` read to find a project's folder. */
const REGISTRY_BUDGET = 1024 * 1024;
const MARKER_BUDGET = 4096;
const TMP_ENTRIES_BUDGET = 10_000;
const SLUG = /^[a-z0-9-]{1,200}$/;

/**
 * The folder Gemini CLI 0.61.0 keeps the project in `cwd` in, under `tmp` (ProjectRegistry.getShortId): the one
 * `projects.json` names for its real path when its `.project_root` (if any) names it too; else the one whose
 * `.project_root` names it; else a new one, its base name in lower-case letters, digits and `-`, with `-1`, `-2`, …
 * when another project holds that one. The copy of `projects.json` the session gets names it (`seedCopy`), so the
 * real Gemini CLI writes its chats where the sandbox lets it. What is over a budget counts as not there.
 */
export function geminiProject(dir: string, cwd: string): string {
  const root = realOr(path.resolve(cwd));
  const tmp = path.join(dir, "tmp");
  const owner = (slug: string) => readSmall(path.join(tmp, slug, ".project_root"), MARKER_BUDGET)?.trim();
  const projects = registryOf(readSmall(path.join(dir, "projects.json"), REGISTRY_BUDGET));
  const named = projects[root];
  if (named !== undefined && [undefined, root].includes(owner(named))) return named;
  let names: string[] = [];
  try {
    names = readdirSync(tmp).slice(0, TMP_ENTRIES_BUDGET);
  } catch {
    // no tmp yet
  }
  const found = names.find((n) => SLUG.test(n) && owner(n) === root);
  if (found) return found;
  const slug =
    path
      .basename(root)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "-")
      .replace(/-+/g, "-")
      .replace(/^-|-$/g, "") || "project";
  const taken = new Set(Object.values(projects));
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? slug : `${slug}-${i}`;
    const o = owner(candidate);
    if (!taken.has(candidate) && (o === undefined || o === root)) return candidate;
  }
}

/** `projects.json` with the project at `root` named `slug` (its other content as it was; `{}` when it is no registry). */
function withProject(content: string, root: string, slug: string): string {
  const projects = content.length <= REGISTRY_BUDGET ? registryOf(content) : {};
  return `${JSON.stringify({ projects: { ...projects, [root]: slug } }, null, 2)}\n`;
}

/** The projects of a `projects.json` (path to folder name), or none when it is none. */
function registryOf(content: string | undefined): Record<string, string> {
  try {
    const parsed = JSON.parse(content ?? "") as { projects?: unknown };
    const projects = parsed?.projects;
    if (!projects || typeof projects !== "object" || Array.isArray(projects)) return {};
    return Object.fromEntries(Object.entries(projects).filter((e): e is [string, string] => typeof e[1] === "string" && SLUG.test(e[1])));
  } catch {
    return {};
  }
}

/** The text of the regular file `file` when it is at most `budget` bytes (no link followed), else undefined. */
function readSmall(file: string, budget: number): string | undefined {
  let fd: number | undefined;
  try {
    // A part of the path may be no folder (ENOTDIR): none then.
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (!st?.isFile() || st.size > budget) return undefined;
    fd = openSync(file, "r");
    const buf = Buffer.alloc(budget + 1);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return n > budget ? undefined : buf.subarray(0, n).toString("utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
