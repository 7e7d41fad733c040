import path from "node:path";
import type { Agent } from "./agent-contracts.js";
import { HOOK_MATCHERS, readHookCommand, TIMEOUT } from "./hook-config.js";

type Json = Record<string, unknown>;

/** One twinlock hook entry found in a tool's config: where it sits, and what it runs. */
export interface InstalledHook {
  command: string;
  /** The matcher group's index in its event (Codex files its trust under it), and the handler's in the group. */
  group: number;
  handler: number;
  matcher: string | undefined;
  /** In the tool's own unit: seconds, or milliseconds for Gemini CLI. */
  timeout: unknown;
  /** Claude Code's `onFailure`, Cursor's `failClosed`. */
  onFailure?: unknown;
  failClosed?: unknown;
  event: string;
}

/** The event each tool's pre-tool-use hook is filed under in its config. */
export const HOOK_EVENT: Record<Agent, string> = { claude: "PreToolUse", codex: "PreToolUse", gemini: "BeforeTool", cursor: "preToolUse" };

/** Every twinlock hook entry for `agent` in its parsed config. */
export function installedHooks(config: Json, agent: Agent): InstalledHook[] {
  const hooks = (config.hooks ?? {}) as Json;
  const event = HOOK_EVENT[agent];
  const groups = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
  const found: InstalledHook[] = [];
  groups.forEach((g, group) => {
    const entry = (g ?? {}) as Json;
    if (agent === "cursor") {
      if (readHookCommand(entry.command))
        found.push({
          command: entry.command as string,
          group,
          handler: 0,
          matcher: entry.matcher as string | undefined,
          timeout: entry.timeout,
          failClosed: entry.failClosed,
          event,
        });
      return;
    }
    const inner = Array.isArray(entry.hooks) ? (entry.hooks as unknown[]) : [];
    inner.forEach((h, handler) => {
      const hook = (h ?? {}) as Json;
      if (readHookCommand(hook.command))
        found.push({
          command: hook.command as string,
          group,
          handler,
          matcher: entry.matcher as string | undefined,
          timeout: hook.timeout,
          onFailure: hook.onFailure,
          event,
        });
    });
  });
  return found;
}

/**
 * What in an installed entry would let a call through, each as one line
 * saying what and what to do: a matcher that leaves tools out, a timeout at
 * or below the hook's own 5 s deadline, Claude Code without `onFailure:
 * block`, Cursor without `failClosed`.
 */
export function entryProblems(agent: Agent, hook: InstalledHook): string[] {
  const problems: string[] = [];
  const reinstall = `run \`twinlock hooks install --agent ${agent}\` again`;
  if (hook.matcher !== HOOK_MATCHERS[agent])
    problems.push(`its matcher ${JSON.stringify(hook.matcher)} sends only some tools to the hook; ${reinstall}`);
  const least = agent === "gemini" ? 6000 : 6;
  if (typeof hook.timeout !== "number" || hook.timeout < least)
    problems.push(
      `its timeout ${JSON.stringify(hook.timeout)} is not above the hook's 5 s deadline, so the tool may time it out first; ${reinstall}`,
    );
  if (agent === "claude" && hook.onFailure !== "block")
    problems.push(`it has no "onFailure": "block", so Claude Code runs the call when the hook fails; ${reinstall}`);
  if (agent === "cursor" && hook.failClosed !== true)
    problems.push(`it has no "failClosed": true, so Cursor runs the call when the hook fails; ${reinstall}`);
  return problems;
}

/** The expected timeout value in a tool's unit, for the hash and the checks. */
export function expectedTimeout(agent: Agent): number {
  return agent === "gemini" ? TIMEOUT.ms : TIMEOUT.seconds;
}

/** The hooks.json path as Codex names it in a trust key: absolute, from the current folder. */
export function absoluteConfigPath(file: string): string {
  return path.resolve(file);
}
