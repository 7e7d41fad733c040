import os from "node:os";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import { PACKAGE_ROOT } from "../package-root.js";
import { type Agent, agentNamed } from "./agent-contracts.js";

/** Where an agent tool keeps its hook config: in the project (committed with it) or in the user's home. */
export type HookScope = "project" | "user";

/** What a hook command is made of: the node binary and twinlock's entry point, each an absolute path. */
export interface HookProgram {
  node: string;
  entry: string;
}

/** This twinlock's own program: the node binary running it and its bin/twinlock.cjs. */
export function thisProgram(): HookProgram {
  return { node: process.execPath, entry: path.join(PACKAGE_ROOT, "bin", "twinlock.cjs") };
}

/** The one program that runs `env -u`: where every supported system keeps it, named whole so no PATH is searched. */
export const ENV_BIN = "/usr/bin/env";

/** Letters, digits and `/ . _ - + @ % , : =` only: a path a shell passes on as one word, unquoted. */
function plainPath(what: string, p: string): string {
  if (!path.isAbsolute(p) || !PLAIN.test(p))
    throw new UsageError(
      `${what} ${JSON.stringify(p)} has characters a hook command cannot carry unquoted; use a path of letters, digits and / . _ - only`,
    );
  return p;
}
const PLAIN = /^[A-Za-z0-9/._+@%,:=-]+$/;

/**
 * The command each config runs: absolute paths only (no PATH lookup, no
 * shell function or alias can stand in), and no shell syntax, so it runs
 * the same program whether the tool runs it through a shell or not.
 * `env -u NODE_OPTIONS` because no Node 20 flag makes Node ignore an
 * inherited NODE_OPTIONS, whose `--require` would run code before the hook.
 * The same home and program give the same bytes: reinstalling changes
 * nothing (and a Codex hook trusted stays trusted).
 */
export function hookCommand(agent: Agent, homeDir: string, program: HookProgram = thisProgram()): string {
  // The home is named in the command, never taken from the environment the agent may have shaped.
  const home = plainPath("the gate home", homeDir);
  const node = plainPath("the node binary", program.node);
  const entry = plainPath("twinlock's entry point", program.entry);
  return `${ENV_BIN} -u NODE_OPTIONS ${node} ${entry} hook ${agent} --home ${home}`;
}

/**
 * The parts of a twinlock hook command (any agent, this form or the older
 * `env -u NODE_OPTIONS twinlock hook …`), read word by word, or undefined
 * for a command that is not twinlock's. `program` is undefined for the
 * older form, which found `twinlock` on PATH.
 */
export function readHookCommand(command: unknown): { agent: Agent; home?: string; program?: HookProgram } | undefined {
  if (typeof command !== "string") return undefined;
  const words = command.split(" ").filter((w) => w !== "");
  const at = words.indexOf("hook");
  if (at < 1) return undefined;
  const agent = agentNamed(words[at + 1]);
  const runner = words[at - 1] as string;
  if (!agent || !(runner === "twinlock" || runner.endsWith("/bin/twinlock.cjs"))) return undefined;
  const home = words[at + 2] === "--home" ? words[at + 3] : undefined;
  const node = runner === "twinlock" ? undefined : words[at - 2];
  return { agent, home, program: node === undefined ? undefined : { node, entry: runner } };
}

/** True for a hook command twinlock installed (any agent): what uninstall removes, and install replaces. */
function isOurs(entry: unknown): boolean {
  return readHookCommand((entry as { command?: unknown } | null)?.command) !== undefined;
}

/** The config file of an agent tool in a scope (`dir` is the project folder, or the user's home; Codex's user scope: `$CODEX_HOME`). */
export function hookConfigFile(agent: Agent, scope: HookScope, dir: string = scope === "user" ? os.homedir() : process.cwd()): string {
  // Codex reads the user's hooks.json beside its config.toml, in $CODEX_HOME when that is set.
  if (agent === "codex" && scope === "user" && process.env.CODEX_HOME) return path.join(process.env.CODEX_HOME, "hooks.json");
  const folder = { claude: ".claude", codex: ".codex", gemini: ".gemini", cursor: ".cursor" }[agent];
  const name = agent === "claude" || agent === "gemini" ? "settings.json" : "hooks.json";
  return path.join(dir, folder, name);
}

/**
 * The tools each config sends to the hook: all of them. The hook passes
 * reads itself and denies a tool it does not know, so a tool a new version
 * adds is held until twinlock knows it, never let through unasked. Cursor
 * runs a preToolUse hook with no matcher for every tool.
 */
export const HOOK_MATCHERS: Record<Agent, string | undefined> = {
  claude: ".*",
  codex: ".*",
  gemini: ".*",
  cursor: undefined,
};

/**
 * The variables Gemini CLI must hand the hook: with GITHUB_SHA set (CI) it
 * passes hooks only the ones `security.environmentVariableRedaction.allowed`
 * lists, and without them an admitted executor would be denied.
 */
export const GEMINI_ALLOWED_ENV = [
  "TWINLOCK_RUN",
  "TWINLOCK_EXECUTOR",
  "TWINLOCK_PLANNER",
  "TWINLOCK_HANDOFF",
  "TWINLOCK_SESSION",
  "TWINLOCK_HOME",
];

/** Seconds (Claude Code, Codex, Cursor) or milliseconds (Gemini CLI) a tool waits: above the hook's own 5 s deadline. */
export const TIMEOUT = { seconds: 10, ms: 10_000 };

type Json = Record<string, unknown>;

/** Claude Code permission rules denying edits to the gate home and to private key files. */
export function claudeDenyRules(homeDir: string): string[] {
  // Claude Code writes an absolute path in a rule as `//path`.
  const abs = `/${path.resolve(homeDir)}`;
  return [`Edit(${abs}/**)`, `Write(${abs}/**)`, "Edit(**/*.key)", "Write(**/*.key)"];
}

/**
 * `config` with twinlock's hook entries for `agent` (and, for Claude Code,
 * its deny rules), replacing any it had: everything else is kept as it was,
 * and installing twice gives the same config.
 */
export function addHookEntries(config: Json, agent: Agent, homeDir: string, program: HookProgram = thisProgram()): Json {
  const out = removeHookEntries(config, agent, homeDir);
  const hooks = { ...((out.hooks as Json | undefined) ?? {}) };
  const command = hookCommand(agent, homeDir, program);
  if (agent === "cursor") {
    out.version = out.version ?? 1;
    const entry = { command, timeout: TIMEOUT.seconds, failClosed: true };
    hooks.preToolUse = [...list(hooks.preToolUse), entry];
    hooks.beforeShellExecution = [...list(hooks.beforeShellExecution), entry];
    hooks.beforeMCPExecution = [...list(hooks.beforeMCPExecution), entry];
  } else if (agent === "gemini") {
    hooks.BeforeTool = [
      ...list(hooks.BeforeTool),
      { matcher: HOOK_MATCHERS.gemini, hooks: [{ type: "command", name: "twinlock", command, timeout: TIMEOUT.ms }] },
    ];
  } else {
    const hook: Json = { type: "command", command, timeout: TIMEOUT.seconds };
    // Claude Code blocks the call when the hook itself fails (exit 1, not found, bad output, timeout) only with this.
    if (agent === "claude") hook.onFailure = "block";
    hooks.PreToolUse = [...list(hooks.PreToolUse), { matcher: HOOK_MATCHERS[agent], hooks: [hook] }];
  }
  out.hooks = hooks;
  if (agent === "gemini") {
    const security = { ...((out.security as Json | undefined) ?? {}) };
    const redaction = { ...((security.environmentVariableRedaction as Json | undefined) ?? {}) };
    const allowed = list(redaction.allowed);
    redaction.allowed = [...allowed, ...GEMINI_ALLOWED_ENV.filter((n) => !allowed.includes(n))];
    security.environmentVariableRedaction = redaction;
    out.security = security;
  }
  if (agent === "claude") {
    const permissions = { ...((out.permissions as Json | undefined) ?? {}) };
    const deny = list(permissions.deny);
    permissions.deny = [...deny, ...claudeDenyRules(homeDir).filter((r) => !deny.includes(r))];
    out.permissions = permissions;
  }
  return out;
}

/** `config` without twinlock's hook entries (and Claude Code deny rules); events and sections left empty by that are dropped. */
export function removeHookEntries(config: Json, agent: Agent, homeDir: string): Json {
  const out: Json = { ...config };
  if (out.hooks !== undefined) {
    const hooks: Json = { ...(out.hooks as Json) };
    for (const [event, value] of Object.entries(hooks)) {
      if (!Array.isArray(value)) continue;
      const kept =
        agent === "cursor"
          ? value.filter((e) => !isOurs(e))
          : value.flatMap((group) => {
              const inner = (group as { hooks?: unknown } | null)?.hooks;
              if (!Array.isArray(inner) || !inner.some(isOurs)) return [group];
              const rest = inner.filter((h) => !isOurs(h));
              return rest.length > 0 ? [{ ...(group as Json), hooks: rest }] : [];
            });
      if (kept.length > 0) hooks[event] = kept;
      else delete hooks[event];
    }
    if (Object.keys(hooks).length > 0) out.hooks = hooks;
    else delete out.hooks;
  }
  if (agent === "gemini") dropGeminiAllowed(out);
  if (agent === "claude" && out.permissions !== undefined) {
    const permissions: Json = { ...(out.permissions as Json) };
    const ours = new Set(claudeDenyRules(homeDir));
    if (Array.isArray(permissions.deny)) {
      const deny = permissions.deny.filter((r) => !ours.has(r as string));
      if (deny.length > 0) permissions.deny = deny;
      else delete permissions.deny;
    }
    if (Object.keys(permissions).length > 0) out.permissions = permissions;
    else delete out.permissions;
  }
  return out;
}

/** Removes GEMINI_ALLOWED_ENV from `security.environmentVariableRedaction.allowed`, and the sections that leaves empty. */
function dropGeminiAllowed(out: Json): void {
  const security = out.security as Json | undefined;
  const redaction = security?.environmentVariableRedaction as Json | undefined;
  if (!security || !redaction || !Array.isArray(redaction.allowed)) return;
  const allowed = redaction.allowed.filter((n) => !GEMINI_ALLOWED_ENV.includes(n as string));
  const nextRedaction: Json = { ...redaction, allowed };
  if (allowed.length === 0) delete nextRedaction.allowed;
  const nextSecurity: Json = { ...security, environmentVariableRedaction: nextRedaction };
  if (Object.keys(nextRedaction).length === 0) delete nextSecurity.environmentVariableRedaction;
  if (Object.keys(nextSecurity).length > 0) out.security = nextSecurity;
  else delete out.security;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
