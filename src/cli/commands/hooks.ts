import { existsSync, lstatSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../../errors/errors.js";
import { diffWithinBudget } from "../../handoff/diff-within-budget.js";
import { resolveHomeDir } from "../../home/resolve-home-dir.js";
import { AGENTS, agentNamed } from "../../hook/agent-contracts.js";
import { codexConfigToml, codexHookHash, codexHookKey, readCodexHookState, writeCodexTrust } from "../../hook/codex-trust.js";
import { addHookEntries, type HookScope, hookConfigFile, removeHookEntries } from "../../hook/hook-config.js";
import { absoluteConfigPath, installedHooks } from "../../hook/installed-hooks.js";
import { findDuplicateJsonKey } from "../../input/duplicate-json-key.js";
import { atomicWriteFile } from "../../store/atomic-write.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

type HooksOptions = CommonOptions & { agent?: string; project?: boolean; user?: boolean; dryRun?: boolean; trust?: boolean };

/**
 * `twinlock hooks install --agent NAME [--project|--user] [--dry-run] [--trust]`:
 * merge twinlock's hook into the tool's config. For Codex, say whether
 * Codex trusts the hook, and with `--trust` write the trust entry its
 * `/hooks` review would (the command and its hash shown first).
 */
export function runHooksInstall(o: HooksOptions): Promise<CommandResult> {
  return change(o, "install");
}

/** `twinlock hooks uninstall --agent NAME [--project|--user] [--dry-run]`: remove only twinlock's own entries. */
export function runHooksUninstall(o: HooksOptions): Promise<CommandResult> {
  return change(o, "uninstall");
}

async function change(o: HooksOptions, what: "install" | "uninstall"): Promise<CommandResult> {
  const agent = agentNamed(o.agent);
  if (!agent) throw new UsageError(`--agent ${o.agent ?? "(missing)"} is not one of ${AGENTS.join(", ")}; e.g. --agent claude`);
  if (o.project && o.user) throw new UsageError("--project and --user name two places; give one");
  if (o.trust && (what !== "install" || agent !== "codex"))
    throw new UsageError("--trust is for `hooks install --agent codex` only: the other tools have no per-hook trust");
  const scope: HookScope = o.user ? "user" : "project";
  const file = hookConfigFile(agent, scope);
  const before = readConfigText(file);
  const config = parseConfig(file, before);
  const homeDir = resolveHomeDir(o.home);
  const next = what === "install" ? addHookEntries(config, agent, homeDir) : removeHookEntries(config, agent, homeDir);
  const after = `${JSON.stringify(next, null, 2)}\n`;
  const changed = after !== (before ?? "") && !(before === undefined && what === "uninstall");
  // The config is the agent tool's, which the agent can write: its diff is bounded like every other.
  const bounded = changed
    ? await diffWithinBudget({ name: file, header: "before", text: before ?? "" }, { name: file, header: "after", text: after })
    : undefined;
  const diff =
    bounded === undefined
      ? ""
      : bounded.kind === "diff"
        ? bounded.patch
        : `${file}: too large to diff (${bounded.reason} over the limit of ${bounded.limit}); before ${bounded.before?.size ?? 0} bytes, sha256 ${bounded.before?.sha256 ?? "(none)"}; after ${bounded.after.size} bytes, sha256 ${bounded.after.sha256}`;
  if (!o.dryRun && changed) {
    mkdirSync(path.dirname(file), { recursive: true });
    atomicWriteFile(file, after, before === undefined ? 0o644 : lstatSync(file).mode & 0o777);
  }
  const done = what === "install" ? `the twinlock hook for ${agent} is in ${file}` : `no twinlock hook for ${agent} is left in ${file}`;
  const trust = what === "install" && agent === "codex" ? codexTrust(file, next, o) : undefined;
  const holds = trust === undefined || trust.trusted;
  // exec and plan bind sessions in the home the hook names: a home that is not there yet is one nobody binds in.
  const homeWarning =
    what === "install" && !existsSync(homeDir)
      ? `warning: the gate home ${homeDir} the hook names does not exist, so no exec or plan session can be bound there and the hook denies every write, shell and outward call; make it (\`twinlock trust pin\`) or install with --home DIR, the home you use`
      : undefined;
  const text = o.dryRun
    ? `${diff || `${file}: nothing to change`}\n(--dry-run: nothing was written)${trust ? `\n${trust.text}` : ""}`
    : `${changed ? "" : "unchanged: "}${done}${
        what === "install" && holds
          ? "; it denies every write, shell and outward call outside a session started with `twinlock exec` (check with `twinlock hooks status`)"
          : ""
      }${trust ? `\n${trust.text}` : ""}`;
  return {
    exitCode: 0,
    text: homeWarning ? `${text}\n${homeWarning}` : text,
    json: {
      ok: true,
      agent,
      scope,
      file,
      changed,
      written: changed && !o.dryRun,
      diff,
      ...(trust ? { codexTrust: trust.json } : {}),
      ...(homeWarning ? { warnings: [homeWarning] } : {}),
    },
  };
}

/**
 * Whether Codex trusts the hook just installed, and what to do when it does
 * not; with `--trust` (and not `--dry-run`), the trust entry written into
 * Codex's config.toml as its `/hooks` review writes it.
 */
function codexTrust(file: string, config: Record<string, unknown>, o: HooksOptions): { trusted: boolean; text: string; json: unknown } {
  const hook = installedHooks(config, "codex")[0];
  if (hook === undefined) throw new Error("the Codex hook just installed is not in its config");
  const key = codexHookKey(absoluteConfigPath(file), hook.group, hook.handler);
  const hash = codexHookHash(hook.command, hook.matcher);
  const toml = codexConfigToml();
  const before = readConfigText(toml) ?? "";
  const state = readCodexHookState(before, key);
  const json = { key, hash, configToml: toml, state };
  if (state.found === true && state.enabled === false)
    return {
      trusted: false,
      text: `Codex has this hook DISABLED (enabled = false for ${key} in ${toml}), so every call runs unasked: enable it in Codex's /hooks review`,
      json,
    };
  if (state.found === true && state.trustedHash === hash)
    return { trusted: true, text: `Codex trusts this hook (${key} in ${toml})`, json };
  const shown = `Codex runs: ${hook.command}\nits hash:   ${hash}\nits key:    ${key}`;
  if (state.found === "elsewhere")
    throw new UsageError(
      `${toml} names this hook's state in a form twinlock does not edit (not a [hooks.state."…"] table); trust the hook in Codex's /hooks review instead — the hooks file was written, the trust was not`,
    );
  if (!o.trust)
    return {
      trusted: false,
      text: `Codex does NOT yet trust this hook${state.found ? " (it changed since it was trusted)" : ""}, and until it does Codex runs every call without asking it, silently.\n${shown}\nTo trust it: start \`codex\` in this folder and approve it in /hooks, or run this again with --trust, which writes trusted_hash = "${hash}" under [hooks.state."${key}"] in ${toml}.`,
      json,
    };
  if (o.dryRun)
    return { trusted: false, text: `${shown}\n--trust would write trusted_hash = "${hash}" under [hooks.state."${key}"] in ${toml}`, json };
  mkdirSync(path.dirname(toml), { recursive: true });
  atomicWriteFile(toml, writeCodexTrust(before, key, hash), before === "" ? 0o600 : lstatSync(toml).mode & 0o777);
  return {
    trusted: true,
    text: `${shown}\ntrusted: wrote trusted_hash under [hooks.state."${key}"] in ${toml}, as Codex's /hooks review does`,
    json,
  };
}

/** The text of a config file twinlock may edit, or undefined when there is none; a link or a non-file is refused. */
export function readConfigText(file: string): string | undefined {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UsageError(`${file} cannot be read (${(error as NodeJS.ErrnoException).code}); fix its permissions and try again`);
  }
  if (st.isSymbolicLink())
    throw new UsageError(
      `${file} is a symbolic link; twinlock edits only a real file — replace the link with the file it points to, then try again`,
    );
  if (!st.isFile()) throw new UsageError(`${file} is not a regular file; move it away and try again`);
  return readFileSync(file, "utf8");
}

/** A tool's JSON config as an object, or a refusal that says what is wrong with it. */
export function parseConfig(file: string, text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${file} is not valid JSON (${(error as Error).message}); fix it by hand, then run this again — nothing was written`,
    );
  }
  const duplicate = findDuplicateJsonKey(text);
  if (duplicate !== undefined)
    throw new UsageError(
      `${file} has the key ${duplicate} twice (the tool may read either); remove one by hand, then run this again — nothing was written`,
    );
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new UsageError(`${file} does not hold a JSON object; fix it by hand, then run this again — nothing was written`);
  const hooks = (value as { hooks?: unknown }).hooks;
  if (hooks !== undefined && (typeof hooks !== "object" || hooks === null || Array.isArray(hooks)))
    throw new UsageError(`${file} has a "hooks" that is not an object; fix it by hand, then run this again — nothing was written`);
  return value as Record<string, unknown>;
}
