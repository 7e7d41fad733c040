import { createHash } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { TIMEOUT } from "./hook-config.js";

/*
 * Codex CLI runs a hook from a user or project hooks.json only when the
 * user's config.toml holds `[hooks.state."<key>"] trusted_hash = "<hash>"`
 * for it, the hash of the hook as it now reads (the `/hooks` review in its
 * TUI writes it). Read from Codex's source (openai/codex,
 * codex-rs/hooks/src/engine/discovery.rs: `command_hook_hash`, `hook_key`;
 * codex-rs/config fingerprint.rs: `version_for_toml`) and checked against
 * Codex CLI 0.169.0, which then runs the hook without
 * `--dangerously-bypass-hook-trust` (test/real-agents).
 */

/** Where Codex keeps its user config: `$CODEX_HOME/config.toml`, or `~/.codex/config.toml`. */
export function codexConfigToml(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.CODEX_HOME || path.join(os.homedir(), ".codex"), "config.toml");
}

/**
 * The key Codex files a hook's state under: the hooks.json path, the event
 * (`pre_tool_use`), the matcher group's index in that event and the
 * handler's index in the group.
 */
export function codexHookKey(hooksJson: string, group: number, handler: number): string {
  return `${hooksJson}:pre_tool_use:${group}:${handler}`;
}

/**
 * The hash Codex computes for one command hook: `sha256:` and the hex
 * SHA-256 of its normalized identity as compact JSON with sorted keys —
 * the event, the matcher, and the one handler with Codex's defaults filled
 * in (`async` false; a missing timeout is 600 s).
 */
export function codexHookHash(command: string, matcher: string | undefined, timeout: number = TIMEOUT.seconds): string {
  const handler = { async: false, command, timeout, type: "command" };
  const identity =
    matcher === undefined ? { event_name: "pre_tool_use", hooks: [handler] } : { event_name: "pre_tool_use", hooks: [handler], matcher };
  return `sha256:${createHash("sha256").update(JSON.stringify(identity)).digest("hex")}`;
}

/** A TOML basic string: `"` and `\` escaped; a control character is refused, as no path twinlock writes holds one. */
function tomlString(text: string): string {
  if (/\p{Cc}/u.test(text)) throw new Error(`${JSON.stringify(text)} holds a control character`);
  return `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** The header of a hook's state table in config.toml, as the `/hooks` review writes it. */
export function codexStateHeader(key: string): string {
  return `[hooks.state.${tomlString(key)}]`;
}

/** What config.toml says of one hook: its trusted_hash and enabled, or that it says nothing, or names it where this reader cannot follow. */
export type CodexHookState = { found: false } | { found: true; trustedHash?: string; enabled?: boolean } | { found: "elsewhere" };

/**
 * The state config.toml `text` holds for `key`, read line by line: the
 * table `[hooks.state."KEY"]` and its `trusted_hash = "…"` and
 * `enabled = true|false` lines. A key named any other way (an inline table,
 * a dotted key) is `elsewhere`: twinlock neither guesses at it nor writes a
 * second entry beside it.
 */
export function readCodexHookState(text: string, key: string): CodexHookState {
  const header = codexStateHeader(key);
  const lines = text.split("\n").map((l) => l.trim());
  const at = lines.indexOf(header);
  if (at < 0) return text.includes(tomlString(key)) || text.includes(key) ? { found: "elsewhere" } : { found: false };
  const state: { found: true; trustedHash?: string; enabled?: boolean } = { found: true };
  for (const line of lines.slice(at + 1)) {
    if (line.startsWith("[")) break;
    const hash = /^trusted_hash\s*=\s*"(sha256:[0-9a-f]{64})"\s*(#.*)?$/.exec(line);
    if (hash) state.trustedHash = hash[1];
    const enabled = /^enabled\s*=\s*(true|false)\s*(#.*)?$/.exec(line);
    if (enabled) state.enabled = enabled[1] === "true";
  }
  return state;
}

/**
 * config.toml `text` with `trusted_hash = HASH` for `key`: the line in the
 * key's table replaced, or added below its header, or a new table at the
 * end. Everything else is kept as it was.
 */
export function writeCodexTrust(text: string, key: string, hash: string): string {
  const header = codexStateHeader(key);
  const line = `trusted_hash = ${tomlString(hash)}`;
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.trim() === header);
  if (at < 0) return `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${text === "" ? "" : "\n"}${header}\n${line}\n`;
  let end = at + 1;
  while (end < lines.length && !(lines[end] as string).trim().startsWith("[")) end++;
  const existing = lines.slice(at + 1, end).findIndex((l) => /^\s*trusted_hash\s*=/.test(l));
  if (existing >= 0) lines[at + 1 + existing] = line;
  else lines.splice(at + 1, 0, line);
  return lines.join("\n");
}
