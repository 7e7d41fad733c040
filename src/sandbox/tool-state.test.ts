import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type AgentTool, agentToolOf } from "./agent-tool.js";
import { chooseSandbox, confineCommand } from "./exec-sandbox.js";
import { findBubblewrap } from "./find-bubblewrap.js";

const bwrap = findBubblewrap();
const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-tool-state-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Each tool's state folder under a HOME of its own. */
const STATE: Record<AgentTool, string> = { claude: ".claude", codex: ".codex", gemini: ".gemini" };

/**
 * The allow-list, written out here as the spec says it (not read from the code): the folders each tool may write in,
 * those private to the session (writable, thrown away after), and the files it may write when they are there.
 */
const FOLDERS: Record<AgentTool, string[]> = {
  claude: ["todos", "statsig", "telemetry", "debug", "sessions", "paste-cache", "image-cache"],
  codex: ["sessions", "archived_sessions", "log", "thread-writer-locks"],
  gemini: ["tmp"],
};
const PRIVATE: Record<AgentTool, string[]> = {
  claude: ["shell-snapshots", "session-env", "backups", "file-history"],
  codex: ["shell_snapshots", ".tmp", "tmp"],
  gemini: ["history"],
};
const FILES: Record<AgentTool, string[]> = {
  claude: ["history.jsonl"],
  codex: ["history.jsonl", "installation_id", "state_5.sqlite", "state_5.sqlite-wal", "logs_2.sqlite", "thread_history_1.sqlite-shm"],
  gemini: ["installation_id", "user_id"],
};

let runs = 0;
/**
 * Runs a stand-in for `tool` under exec's sandbox, in a project of its own, with a HOME whose state folder holds
 * `before` (files, by path relative to it, with their content). The stand-in tries each path of `tries` (relative to
 * the state folder): makes its folder and appends a line to it. Returns the paths it wrote, and the state folder.
 */
function tryWrites(tool: AgentTool, before: Record<string, string>, tries: readonly string[]) {
  const n = runs++;
  const home = path.join(scratch, `home-${tool}-${n}`);
  const project = path.join(scratch, `project-${tool}-${n}`);
  const state = path.join(home, STATE[tool]);
  for (const [rel, content] of Object.entries(before)) {
    mkdirSync(path.dirname(path.join(state, rel)), { recursive: true });
    writeFileSync(path.join(state, rel), content);
  }
  mkdirSync(state, { recursive: true });
  mkdirSync(project);
  // The paths, one a line, where the stand-in reads them: HOME is readable inside.
  writeFileSync(path.join(home, "tries.txt"), tries.map((t) => `${t}\n`).join(""));
  const bin = path.join(scratch, `bin-${n}`, tool);
  mkdirSync(path.dirname(bin));
  writeFileSync(
    bin,
    [
      "#!/bin/sh",
      `s="$HOME/${STATE[tool]}"`,
      'while IFS= read -r p; do mkdir -p "$(dirname "$s/$p")" 2>/dev/null; if echo written >> "$s/$p" 2>/dev/null; then echo "wrote $p"; fi; done < "$HOME/tries.txt"',
      "",
    ].join("\n"),
  );
  chmodSync(bin, 0o755);
  // The stand-in is a shell script named like the tool: judged by its name here (identify-agent-tool.test.ts tests what a program is).
  const byName = {
    env: process.env,
    cwd: project,
    identify: (cmd: readonly string[]) => ({ tool: agentToolOf(cmd), argsAt: 1, what: "a stand-in" }),
  };
  const c = confineCommand(chooseSandbox([bin], {}, findBubblewrap, byName), {
    cmd: [bin],
    env: { PATH: process.env.PATH, HOME: home },
    cwd: project,
    writable: [],
  });
  let r: ReturnType<typeof spawnSync>;
  try {
    r = spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, cwd: project, encoding: "utf8" });
  } finally {
    c.release();
  }
  expect(r.status, String(r.stderr)).toBe(0);
  const wrote = String(r.stdout)
    .split("\n")
    .filter((l) => l.startsWith("wrote "))
    .map((l) => l.slice("wrote ".length));
  return { wrote, state, project };
}

/** Whether `p` (relative to the state folder) still holds what the sandbox's write appended. */
function kept(state: string, p: string): boolean {
  try {
    return lstatSync(path.join(state, p)).isFile() && readFileSync(path.join(state, p), "utf8").includes("written");
  } catch {
    return false; // not there, or a part of it no folder
  }
}

describe.skipIf(!bwrap.ok)(`a tool's state folder under exec's sandbox, run here${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`, () => {
  it("refuses Claude Code a helper script of any name, a script in a subfolder and its memory, which a later session runs or reads as instructions; its transcripts, todos and history stay writable", () => {
    const slug = (project: string) => project.replace(/[^a-zA-Z0-9]/g, "-");
    const n = runs;
    const project = path.join(scratch, `project-claude-${n}`);
    const attacks = [
      "statusline.py",
      "scripts/helper.sh",
      `projects/${slug(project)}/memory/MEMORY.md`,
      "projects/-some-other-project/memory/MEMORY.md",
      "projects/-some-other-project/s.jsonl",
      "plugins/x/hooks/hooks.json",
      "ide/1234.lock",
      ".credentials.json",
    ];
    const allowed = [
      `projects/${slug(project)}/session.jsonl`,
      `projects/${slug(project)}/session/subagents/a.jsonl`,
      "todos/t.json",
      "statsig/s",
      "debug/d.txt",
      "history.jsonl",
    ];
    const { wrote, state } = tryWrites("claude", { "scripts/helper.sh": "#!/bin/sh\n", "history.jsonl": "", ".credentials.json": "{}" }, [
      ...attacks,
      ...allowed,
      "shell-snapshots/snapshot-bash.sh",
      "session-env/s/hook-0.sh",
    ]);
    expect(wrote.filter((w) => attacks.includes(w))).toEqual([]);
    for (const a of attacks) expect(kept(state, a), a).toBe(false);
    for (const a of allowed) expect(kept(state, a), a).toBe(true);
    // What it sources in a later session it wrote in folders of its own, thrown away after.
    expect(wrote).toEqual(expect.arrayContaining(["shell-snapshots/snapshot-bash.sh", "session-env/s/hook-0.sh"]));
    expect(readdirSync(path.join(state, "shell-snapshots"))).toEqual([]);
    expect(readdirSync(path.join(state, "session-env"))).toEqual([]);
  });

  it("refuses Codex a new script, a skill and its instructions; its sessions, logs and databases stay writable", () => {
    const attacks = [
      "foo.py",
      "skills/x/SKILL.md",
      "AGENTS.md",
      "rules/default.rules",
      "memories/MEMORY.md",
      "auth.json",
      "models_cache.json",
    ];
    const allowed = ["sessions/2026/12/02/rollout.jsonl", "log/codex-tui.log", "state_5.sqlite", "history.jsonl"];
    const { wrote, state } = tryWrites("codex", { "state_5.sqlite": "", "history.jsonl": "", "auth.json": "{}" }, [
      ...attacks,
      ...allowed,
      "shell_snapshots/s.sh",
    ]);
    expect(wrote.filter((w) => attacks.includes(w))).toEqual([]);
    for (const a of attacks) expect(kept(state, a), a).toBe(false);
    for (const a of allowed) expect(kept(state, a), a).toBe(true);
    expect(wrote).toContain("shell_snapshots/s.sh");
    expect(readdirSync(path.join(state, "shell_snapshots"))).toEqual([]);
  });

  it("refuses Gemini CLI an extension, a command and the ripgrep it runs, and keeps no new name at its top level; each project's chats and logs stay writable", () => {
    const attacks = [
      "extensions/x/gemini-extension.json",
      "extensions/y/gemini-extension.json",
      "commands/x.toml",
      "tmp/bin/rg",
      "foo.js",
      "projects.json",
      "history/p/.git/config",
    ];
    const allowed = ["tmp/project/chats/session.jsonl", "tmp/project/logs/logs.json", "installation_id"];
    const before = { installation_id: "", "extensions/y/gemini-extension.json": "{}", "commands/y.toml": "" };
    const { wrote, state } = tryWrites("gemini", before, [...attacks, ...allowed]);
    for (const a of attacks) expect(kept(state, a), a).toBe(false);
    for (const a of allowed) expect(kept(state, a), a).toBe(true);
    // Its top level and history are the session's own (a private folder each): a new name written there is thrown
    // away; what was there (its extensions, its commands) and the ripgrep it runs are refused.
    expect(wrote.filter((w) => attacks.includes(w))).toEqual(["foo.js", "projects.json", "history/p/.git/config"]);
    expect(readdirSync(state).sort()).toEqual([".twinlock-stand-ins", "commands", "extensions", "history", "installation_id", "tmp"]);
  });

  it("keeps only what is written in the allow-listed entries of a state folder, whatever the names in it and the names tried (property)", () => {
    const tools: AgentTool[] = ["claude", "codex", "gemini"];
    const listed = (tool: AgentTool) => [...FOLDERS[tool], ...PRIVATE[tool], ...FILES[tool]];
    const name = fc.oneof(
      fc.stringMatching(/^[a-zA-Z0-9._-]{1,16}$/).filter((s) => s !== "." && s !== ".."),
      fc.constantFrom(
        ...tools.flatMap(listed),
        "settings.json",
        "hooks",
        "scripts",
        "statusline.py",
        "config.toml",
        "skills",
        "extensions",
        "projects",
      ),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...tools),
        fc.uniqueArray(name, { minLength: 1, maxLength: 12 }),
        fc.uniqueArray(name, { maxLength: 6 }),
        (tool, tried, existing) => {
          // Names there before as files (the tool's own or not), each tried as itself and as a folder with a file in it.
          const before = Object.fromEntries(existing.map((e) => [e, ""]));
          const tries = [...new Set([...tried, ...existing])].flatMap((t) => [t, `${t}/inner`]);
          const { state } = tryWrites(tool, before, tries);
          const expected = tries.filter((t) => {
            const [top, inner] = t.split("/");
            if (inner === undefined) return FILES[tool].includes(t) && existing.includes(t);
            return FOLDERS[tool].includes(top as string) && !existing.includes(top as string);
          });
          expect(tries.filter((t) => kept(state, t)).sort()).toEqual(expected.sort());
        },
      ),
      { numRuns: 6 },
    );
  });
});
