import path from "node:path";
import { isWithin } from "../input/resolve-real-path.js";

/**
 * The environment `twinlock exec` and `twinlock plan` hand the agent: one
 * table, and nothing that is not in it. A variable passes when its name is
 * listed, or starts with a listed prefix; the session's own TWINLOCK_*
 * variables are set by the command, never taken from its caller. Never
 * passed, whatever the caller names: the reviewer's key file
 * (TWINLOCK_KEY), the caller's actor name (TWINLOCK_ACTOR), the team
 * store's URL (TWINLOCK_STORE, which may hold the database's password), and
 * NODE_OPTIONS (code preloaded into every node the agent starts, the
 * hook's included).
 */
export const AGENT_ENVIRONMENT: ReadonlyArray<{ names?: readonly string[]; prefixes?: readonly string[]; why: string }> = [
  { names: ["PATH", "HOME", "USER", "LOGNAME", "SHELL"], why: "finding programs and the user's own tool settings" },
  { names: ["TMPDIR", "TMP", "TEMP"], why: "temporary files" },
  {
    names: ["TERM", "COLORTERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR"],
    why: "the terminal",
  },
  { names: ["LANG", "LANGUAGE", "TZ"], prefixes: ["LC_"], why: "the locale" },
  { names: ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"], why: "where the agent tool keeps its settings" },
  {
    names: [
      "HTTPS_PROXY",
      "HTTP_PROXY",
      "NO_PROXY",
      "https_proxy",
      "http_proxy",
      "no_proxy",
      "SSL_CERT_FILE",
      "SSL_CERT_DIR",
      "NODE_EXTRA_CA_CERTS",
    ],
    why: "reaching the model's API through a proxy or a private CA",
  },
  {
    prefixes: ["ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "CURSOR_"],
    why: "the agent tools' own settings and API keys",
  },
];

/** The variables the session itself sets: taken only from the command, never passed on from its caller. */
export const SESSION_VARIABLES = [
  "TWINLOCK_RUN",
  "TWINLOCK_EXECUTOR",
  "TWINLOCK_PLANNER",
  "TWINLOCK_HANDOFF",
  "TWINLOCK_SESSION",
  "TWINLOCK_HOME",
  "TWINLOCK_MCP_SOCKET",
] as const;

/** Never handed to the agent, even when named with `--env`. */
export const NEVER_PASSED = ["TWINLOCK_KEY", "TWINLOCK_ACTOR", "TWINLOCK_STORE", "NODE_OPTIONS"] as const;

/** Whether AGENT_ENVIRONMENT passes a variable of this name. */
export function isAgentVariable(name: string): boolean {
  if (name.startsWith("TWINLOCK_") || (NEVER_PASSED as readonly string[]).includes(name)) return false;
  return AGENT_ENVIRONMENT.some((row) => row.names?.includes(name) || row.prefixes?.some((p) => name.startsWith(p)));
}

/**
 * The agent's environment: the caller's variables AGENT_ENVIRONMENT passes,
 * those it names in `extra` (never NEVER_PASSED or another TWINLOCK_*), then
 * the session's own. PATH keeps only absolute folders outside `writable`
 * (the folders the session may write): a relative entry (`.`, an empty
 * one) or one the agent can write would let it choose what a program name runs.
 */
export function agentEnvironment(
  parent: NodeJS.ProcessEnv,
  session: Partial<Record<(typeof SESSION_VARIABLES)[number], string>>,
  o: { extra?: readonly string[]; writable?: readonly string[] } = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) if (value !== undefined && isAgentVariable(name)) env[name] = value;
  for (const name of o.extra ?? []) {
    const value = parent[name];
    if (value !== undefined && !name.startsWith("TWINLOCK_") && !(NEVER_PASSED as readonly string[]).includes(name)) env[name] = value;
  }
  if (env.PATH !== undefined) {
    const writable = o.writable ?? [];
    env.PATH = env.PATH.split(path.delimiter)
      .filter((dir) => path.isAbsolute(dir) && !writable.some((w) => isWithin(path.resolve(dir), w)))
      .join(path.delimiter);
  }
  for (const [name, value] of Object.entries(session)) if (value !== undefined) env[name] = value;
  return env;
}
