import os from "node:os";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import type { Agent } from "./agent-contracts.js";

/** Where an agent tool keeps its hook config: in the project (committed with it) or in the user's home. */
export type HookScope = "project" | "user";

/**
 * The command each config runs. A fixed string with no shell syntax, so it
 * runs the same program whether the tool runs it through a shell or not;
 * `env -u NODE_OPTIONS` because no Node 20 flag makes Node ignore an
 * inherited NODE_OPTIONS, whose `--require` would run code before the hook.
 */
export function hookCommand(agent: Agent, homeDir: string): string {
  // The home is named in the command, never taken from the environment the agent may have shaped.
  if (!path.isAbsolute(homeDir) || !/^[A-Za-z0-9/._+@%,:=-]+$/.test(homeDir))
    throw new UsageError(
      `the gate home ${JSON.stringify(homeDir)} has characters a hook command cannot carry unquoted; use a home path of letters, digits and / . _ - only`,
    );
  return `env -u NODE_OPTIONS twinlock hook ${agent} --home ${homeDir}`;
}

/** True for a hook command twinlock installed (any agent): what uninstall removes, and install replaces. */
function isOurs(entry: unknown): boolean {
  const command = (entry as { command?: unknown } | null)?.command;
  return typeof command === "string" && /(^|\s)twinlock hook (claude|codex|gemini|cursor)(\s|$)/.test(command);
}

/** The config file of an agent tool in a scope (`dir` is the project folder, or the user's home). */
export function hookConfigFile(agent: Agent, scope: HookScope, dir: string = scope === "user" ? os.homedir() : process.cwd()): string {
  const folder = { claude: ".claude", codex: ".codex", gemini: ".gemini", cursor: ".cursor" }[agent];
  const name = agent === "claude" || agent === "gemini" ? "settings.json" : "hooks.json";
  return path.join(dir, folder, name);
}

/** The tools each config sends to the hook: every write, edit, shell and MCP tool of that agent tool. */
export const HOOK_MATCHERS: Record<Agent, string> = {
  claude: "Bash|Write|Edit|MultiEdit|NotebookEdit|mcp__.*",
  codex: "Bash|apply_patch|Edit|Write|mcp__.*",
  gemini: "write_file|replace|run_shell_command|mcp_.*",
  cursor: "Write|Edit|StrReplace|Delete|MultiEdit|Shell|MCP.*|mcp__.*",
};

/** Seconds (Claude Code, Codex, Cursor) or milliseconds (Gemini CLI) a tool waits: above the hook's own 5 s deadline. */
const TIMEOUT = { seconds: 10, ms: 10_000 };

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
export function addHookEntries(config: Json, agent: Agent, homeDir: string): Json {
  const out = removeHookEntries(config, agent, homeDir);
  const hooks = { ...((out.hooks as Json | undefined) ?? {}) };
  const command = hookCommand(agent, homeDir);
  if (agent === "cursor") {
    out.version = out.version ?? 1;
    const entry = { command, timeout: TIMEOUT.seconds, failClosed: true };
    hooks.preToolUse = [...list(hooks.preToolUse), { ...entry, matcher: HOOK_MATCHERS.cursor }];
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

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
