import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../../errors/errors.js";
import { AGENTS, type Agent, agentNamed } from "../../hook/agent-contracts.js";
import { codexConfigToml, codexHookHash, codexHookKey, readCodexHookState } from "../../hook/codex-trust.js";
import { ENV_BIN, GEMINI_ALLOWED_ENV, type HookScope, hookConfigFile, readHookCommand } from "../../hook/hook-config.js";
import { absoluteConfigPath, entryProblems, installedHooks } from "../../hook/installed-hooks.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { parseConfig, readConfigText } from "./hooks.js";

type StatusOptions = CommonOptions & { agent?: string };
type Json = Record<string, unknown>;

/**
 * What each version of a tool does when the hook itself fails, as driven
 * through it (test/real-agents): the versions twinlock was checked against.
 */
export const KNOWN_VERSIONS: Record<Agent, Record<string, { failsClosed: boolean; note: string }>> = {
  claude: {
    "2.1.328": { failsClosed: true, note: 'with "onFailure": "block" a hook that fails, is not found or times out blocks the call' },
  },
  codex: {
    "0.169.0": {
      failsClosed: false,
      note: "a hook that exits 127, dies by a signal or times out lets the call run: run it under `twinlock exec`, whose sandbox holds then",
    },
  },
  gemini: {
    "0.61.0": {
      failsClosed: false,
      note: "a hook that dies by a signal or times out lets the call run: run it under `twinlock exec`, whose sandbox holds then",
    },
  },
  cursor: {},
};

/** The command each tool's CLI is started by, for its version. */
const CLI: Record<Agent, string> = { claude: "claude", codex: "codex", gemini: "gemini", cursor: "cursor-agent" };

/** One tool in one scope, as status sees it. */
interface ScopeStatus {
  agent: Agent;
  scope: HookScope;
  file: string;
  installed: boolean;
  trusted?: boolean | "disabled";
  /** What would let a call through, each with what to do: any one makes status exit 1. */
  problems: string[];
  /** What to know that lets no call through by itself. */
  notes: string[];
}

/**
 * `twinlock hooks status [--agent NAME]`: per tool and scope, whether the
 * hook is installed, trusted (Codex), runs a node binary and entry point
 * that exist, and is not switched off by the tool's own settings; the tool's
 * version on PATH and what it does when a hook fails. Exit 1 when any of it
 * would let a call through unasked.
 */
export async function runHooksStatus(o: StatusOptions): Promise<CommandResult> {
  const only = o.agent === undefined ? undefined : agentNamed(o.agent);
  if (o.agent !== undefined && !only) throw new UsageError(`--agent ${o.agent} is not one of ${AGENTS.join(", ")}; e.g. --agent codex`);
  const rows: ScopeStatus[] = [];
  const versions: Record<string, unknown> = {};
  const lines: string[] = [];
  for (const agent of only ? [only] : AGENTS) {
    const scopes = (["project", "user"] as const).map((scope) => scopeStatus(agent, scope));
    const version = toolVersion(agent);
    versions[agent] = version;
    const any = scopes.some((s) => s.installed);
    if (!any && only)
      scopes[0]?.problems.push(`no twinlock hook for ${agent} in either scope: run \`twinlock hooks install --agent ${agent}\``);
    rows.push(...scopes);
    const known = version.version === undefined ? undefined : KNOWN_VERSIONS[agent][version.version];
    lines.push(
      `${agent}: ${version.version ? `${CLI[agent]} ${version.version} on PATH` : `${CLI[agent]} not on PATH`}${
        version.version === undefined
          ? ""
          : known
            ? known.failsClosed
              ? ` (checked: fails closed — ${known.note})`
              : ` (checked: FAILS OPEN when the hook fails — ${known.note})`
            : " (a version twinlock was not checked against)"
      }`,
    );
    for (const s of scopes) {
      const state = !s.installed
        ? "not installed"
        : s.trusted === undefined
          ? "installed"
          : s.trusted === true
            ? "installed, trusted"
            : s.trusted === "disabled"
              ? "installed, DISABLED"
              : "installed, NOT TRUSTED";
      lines.push(`  ${s.scope.padEnd(7)} ${state}: ${s.file}`);
      for (const p of s.problems) lines.push(`    problem: ${p}`);
      for (const n of s.notes) lines.push(`    note: ${n}`);
    }
  }
  // No hook anywhere: every agent tool runs every call unasked, and exec or plan would bind a session nobody checks.
  if (!only && !rows.some((r) => r.installed)) {
    const none = "no twinlock hook is installed for any agent tool here: run `twinlock hooks install --agent NAME`";
    rows[0]?.problems.push(none);
    lines.push(`  problem: ${none}`);
  }
  const problems = rows.reduce((n, r) => n + r.problems.length, 0);
  lines.push(
    problems === 0 ? "no setting found that lets a call through unasked" : `${problems} problem(s) would let a call through unasked`,
  );
  return { exitCode: problems === 0 ? 0 : 1, text: lines.join("\n"), json: { ok: problems === 0, tools: rows, versions } };
}

/** What exec and plan say when no agent tool here has a twinlock hook (an in-process SDK agent asks through its adapter instead). */
export const NO_HOOK_NOTE =
  "twinlock: no twinlock hook is installed here for any agent tool (`twinlock hooks status`): nothing asks the gate before an agent CLI's calls; install one with `twinlock hooks install --agent NAME` (an SDK agent that uses a twinlock/… adapter needs none)";

/** Whether any agent tool has a twinlock hook here (project or user scope): without one, exec's and plan's sessions are asked by nobody. */
export function hookInstalledAnywhere(): boolean {
  return AGENTS.some((agent) =>
    (["project", "user"] as const).some((scope) => {
      try {
        const file = hookConfigFile(agent, scope);
        return installedHooks(parseConfig(file, readConfigText(file)), agent).length > 0;
      } catch {
        return false;
      }
    }),
  );
}

function scopeStatus(agent: Agent, scope: HookScope): ScopeStatus {
  const file = hookConfigFile(agent, scope);
  const status: ScopeStatus = { agent, scope, file, installed: false, problems: [], notes: [] };
  let config: Json;
  try {
    config = parseConfig(file, readConfigText(file));
  } catch (error) {
    status.problems.push((error as Error).message);
    return status;
  }
  const hooks = installedHooks(config, agent);
  status.installed = hooks.length > 0;
  for (const hook of hooks) {
    status.problems.push(
      ...entryProblems(agent, hook),
      ...programProblems(agent, hook.command),
      ...homeProblems(agent, hook.command, status),
    );
    if (agent === "codex") trustOf(status, file, hook.command, hook.matcher, hook.group, hook.handler);
  }
  if (hooks.length > 1) status.notes.push(`${hooks.length} twinlock entries: \`twinlock hooks install --agent ${agent}\` leaves one`);
  defeats(status, agent, scope, config);
  return status;
}

/**
 * The gate home a hook command names: shown, and a problem when it is not a
 * folder, since the hook would look for sessions where exec and plan never
 * bind them and deny every call of a real session.
 */
function homeProblems(agent: Agent, command: string, status: ScopeStatus): string[] {
  const home = readHookCommand(command)?.home;
  if (home === undefined) return [];
  status.notes.push(`the hook reads sessions in the gate home ${home}: run exec and plan with that home (TWINLOCK_HOME or --home)`);
  return existsSync(home)
    ? []
    : [
        `the gate home ${home} the hook names does not exist; make it (\`twinlock trust pin\`) or run \`twinlock hooks install --agent ${agent} --home DIR\` with the home you use`,
      ];
}

/** A command whose programs are missing (the tool's shell exits 127) or found on PATH. */
function programProblems(agent: Agent, command: string): string[] {
  const read = readHookCommand(command);
  const reinstall = `run \`twinlock hooks install --agent ${agent}\` again`;
  if (!read?.program)
    return [
      `the command finds \`twinlock\` (and node) on the tool's PATH, which a shell start-up file can change or lack (exit 127); ${reinstall} for absolute paths`,
    ];
  const out: string[] = [];
  if (!command.startsWith(`${ENV_BIN} `) || !executable(ENV_BIN)) out.push(`${ENV_BIN} is not there to run the hook; ${reinstall}`);
  if (!executable(read.program.node))
    out.push(`the node binary ${read.program.node} it runs is gone (Node was moved or upgraded?); ${reinstall}`);
  if (!existsSync(read.program.entry)) out.push(`twinlock's entry point ${read.program.entry} is gone; ${reinstall}`);
  return out;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Codex's trust in one entry, from its config.toml, and whether it loads the project's hooks at all. */
function trustOf(status: ScopeStatus, file: string, command: string, matcher: string | undefined, group: number, handler: number): void {
  const key = codexHookKey(absoluteConfigPath(file), group, handler);
  const hash = codexHookHash(command, matcher);
  const toml = codexConfigToml();
  let text = "";
  try {
    text = readConfigText(toml) ?? "";
  } catch (error) {
    status.problems.push((error as Error).message);
  }
  const state = readCodexHookState(text, key);
  const fix = `start \`codex\` here and approve it in /hooks, or run \`twinlock hooks install --agent codex${status.scope === "user" ? " --user" : ""} --trust\``;
  if (state.found === true && state.enabled === false) {
    status.trusted = "disabled";
    status.problems.push(`Codex has it disabled (enabled = false for ${key} in ${toml}); enable it in /hooks`);
  } else if (state.found === true && state.trustedHash === hash) status.trusted = true;
  else {
    status.trusted = false;
    status.problems.push(
      state.found === "elsewhere"
        ? `${toml} names its state in a form twinlock does not read; Codex may not trust it: check in /hooks`
        : `Codex does not trust it${state.found ? " (it changed since it was trusted)" : ""} and silently runs every call without it: ${fix}`,
    );
  }
  if (status.scope === "project" && !codexTrustsProject(text, process.cwd()))
    status.problems.push(
      `Codex loads a project's hooks only in a trusted project, and ${toml} has no [projects."…"] trust_level = "trusted" for ${process.cwd()} or a folder above it: trust the project when Codex asks, or install with --user`,
    );
}

/** True when config.toml marks `dir` or a folder above it trusted. */
function codexTrustsProject(text: string, dir: string): boolean {
  for (let d = dir; ; d = path.dirname(d)) {
    const state = readTable(text, `[projects.${JSON.stringify(d)}]`);
    if (state?.trust_level === '"trusted"') return true;
    if (path.dirname(d) === d) return false;
  }
}

/** The `key = value` lines of one table in a TOML text (values as written), or undefined when it has no such table. */
function readTable(text: string, header: string): Record<string, string> | undefined {
  const lines = text.split("\n").map((l) => l.trim());
  const at = lines.indexOf(header);
  if (at < 0) return undefined;
  const out: Record<string, string> = {};
  for (const line of lines.slice(at + 1)) {
    if (line.startsWith("[")) break;
    const eq = line.indexOf("=");
    if (eq > 0) out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

/** The tool's own settings in this file that switch the hook off, or that matter to it. */
function defeats(status: ScopeStatus, agent: Agent, scope: HookScope, config: Json): void {
  if (agent === "claude") {
    const files = [config];
    if (scope === "project") {
      const local = path.join(path.dirname(status.file), "settings.local.json");
      try {
        files.push(parseConfig(local, readConfigText(local)));
      } catch (error) {
        status.problems.push((error as Error).message);
      }
    }
    for (const c of files) {
      if (c.disableAllHooks === true) status.problems.push('"disableAllHooks": true switches every hook off, twinlock\'s too: remove it');
      if ((c.permissions as Json | undefined)?.defaultMode === "bypassPermissions")
        status.notes.push('"defaultMode": "bypassPermissions": the hook still denies, but nothing else asks the user');
    }
  }
  if (agent === "gemini") {
    const hooksConfig = (config.hooksConfig ?? {}) as Json;
    if (hooksConfig.enabled === false) status.problems.push('"hooksConfig": {"enabled": false} switches every hook off: remove it');
    const disabled = Array.isArray(hooksConfig.disabled) ? hooksConfig.disabled : [];
    if (disabled.some((n) => n === "twinlock" || (typeof n === "string" && readHookCommand(n))))
      status.problems.push('"hooksConfig.disabled" lists the twinlock hook: remove it from the list');
    if (status.installed) {
      const allowed = ((config.security as Json | undefined)?.environmentVariableRedaction as Json | undefined)?.allowed;
      const missing = GEMINI_ALLOWED_ENV.filter((n) => !(Array.isArray(allowed) && allowed.includes(n)));
      if (missing.length > 0)
        status.notes.push(
          `security.environmentVariableRedaction.allowed lacks ${missing.join(", ")}: in CI (GITHUB_SHA set) Gemini hides them and the executor is denied; run \`twinlock hooks install --agent gemini\` again`,
        );
    }
  }
}

/** The tool's version from `CLI --version` when it is on PATH. */
function toolVersion(agent: Agent): { version?: string; problem?: string } {
  const r = spawnSync(CLI[agent], ["--version"], { encoding: "utf8", timeout: 15_000, stdio: ["ignore", "pipe", "pipe"] });
  if (r.error) return {};
  const found = /(\d+\.\d+\.\d+)/.exec(`${r.stdout}`);
  return found ? { version: found[1] } : { problem: `\`${CLI[agent]} --version\` printed no version` };
}
