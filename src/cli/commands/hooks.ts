import { lstatSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../../errors/errors.js";
import { diffWithinBudget } from "../../handoff/diff-within-budget.js";
import { resolveHomeDir } from "../../home/resolve-home-dir.js";
import { AGENTS, agentNamed } from "../../hook/agent-contracts.js";
import { addHookEntries, type HookScope, hookConfigFile, removeHookEntries } from "../../hook/hook-config.js";
import { findDuplicateJsonKey } from "../../input/duplicate-json-key.js";
import { atomicWriteFile } from "../../store/atomic-write.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

type HooksOptions = CommonOptions & { agent?: string; project?: boolean; user?: boolean; dryRun?: boolean };

/** `twinlock hooks install --agent NAME [--project|--user] [--dry-run]`: merge twinlock's hook into the tool's config. */
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
  const text = o.dryRun
    ? `${diff || `${file}: nothing to change`}\n(--dry-run: nothing was written)`
    : `${changed ? "" : "unchanged: "}${done}${what === "install" ? `; it denies every write, shell and MCP call outside a session started with \`twinlock exec\`` : ""}`;
  return { exitCode: 0, text, json: { ok: true, agent, scope, file, changed, written: changed && !o.dryRun, diff } };
}

function readConfigText(file: string): string | undefined {
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

function parseConfig(file: string, text: string | undefined): Record<string, unknown> {
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
