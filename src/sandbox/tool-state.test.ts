import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type AgentTool, agentToolOf } from "./agent-tool.js";
import { chooseSandbox, confineCommand } from "./exec-sandbox.js";
import { findBubblewrap } from "./find-bubblewrap.js";
import { geminiProject } from "./tool-state.js";

const bwrap = findBubblewrap();
const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-tool-state-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Each tool's state folder under a HOME of its own. */
const STATE: Record<AgentTool, string> = { claude: ".claude", codex: ".codex", gemini: ".gemini" };

/**
 * The allow-list, written out here as the spec says it (not read from the code): the folders each tool may write in,
 * those private to the session (writable, thrown away after), the files it may write when they are there, and those
 * it gets a private copy of (written in the session, thrown away after: what a later session acts on).
 */
const FOLDERS: Record<AgentTool, string[]> = {
  claude: ["todos", "statsig", "telemetry", "debug", "sessions", "paste-cache", "image-cache"],
  codex: ["sessions", "archived_sessions", "log", "thread-writer-locks"],
  gemini: [],
};
const PRIVATE: Record<AgentTool, string[]> = {
  claude: ["shell-snapshots", "session-env", "backups", "file-history"],
  codex: ["shell_snapshots", ".tmp", "tmp"],
  gemini: ["tmp", "history"],
};
const FILES: Record<AgentTool, string[]> = {
  claude: [],
  codex: ["installation_id"],
  gemini: ["installation_id", "user_id"],
};
const COPIES: Record<AgentTool, string[]> = {
  claude: ["history.jsonl"],
  codex: [
    "history.jsonl",
    "state_5.sqlite",
    "state_5.sqlite-wal",
    "logs_2.sqlite",
    "thread_history_1.sqlite-shm",
    "goals_1.sqlite",
    "queue_1.sqlite",
  ],
  gemini: [],
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
  it("refuses Claude Code a helper script of any name, a script in a subfolder and its memory, which a later session runs or reads as instructions, and keeps its prompt history private; its transcripts and todos stay writable", () => {
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
    ];
    const { wrote, state } = tryWrites("claude", { "scripts/helper.sh": "#!/bin/sh\n", "history.jsonl": "", ".credentials.json": "{}" }, [
      ...attacks,
      ...allowed,
      "shell-snapshots/snapshot-bash.sh",
      "session-env/s/hook-0.sh",
      "history.jsonl",
    ]);
    // Its prompt history (recalled and sent again by the person) is a private copy: written in the session, not after.
    expect(wrote).toContain("history.jsonl");
    expect(kept(state, "history.jsonl")).toBe(false);
    expect(wrote.filter((w) => attacks.includes(w))).toEqual([]);
    for (const a of attacks) expect(kept(state, a), a).toBe(false);
    for (const a of allowed) expect(kept(state, a), a).toBe(true);
    // What it sources in a later session it wrote in folders of its own, thrown away after.
    expect(wrote).toEqual(expect.arrayContaining(["shell-snapshots/snapshot-bash.sh", "session-env/s/hook-0.sh"]));
    expect(readdirSync(path.join(state, "shell-snapshots"))).toEqual([]);
    expect(readdirSync(path.join(state, "session-env"))).toEqual([]);
  });

  it("refuses Codex a new script, a skill and its instructions, and gives it private copies of its databases (goals, queued input, jobs) and prompt history; its sessions and logs stay writable", () => {
    const attacks = [
      "foo.py",
      "skills/x/SKILL.md",
      "AGENTS.md",
      "rules/default.rules",
      "memories/MEMORY.md",
      "auth.json",
      "models_cache.json",
    ];
    const allowed = ["sessions/2026/12/02/rollout.jsonl", "log/codex-tui.log"];
    const copies = ["state_5.sqlite", "goals_1.sqlite", "queue_1.sqlite", "history.jsonl"];
    const before = Object.fromEntries([...copies, "auth.json"].map((c) => [c, "as it was\n"]));
    const { wrote, state } = tryWrites("codex", before, [...attacks, ...allowed, ...copies, "shell_snapshots/s.sh"]);
    // Each database and the history it read and wrote as it would, as a copy thrown away after: the real one as it was.
    expect(wrote).toEqual(expect.arrayContaining(copies));
    for (const c of copies) expect(readFileSync(path.join(state, c), "utf8"), c).toBe("as it was\n");
    expect(wrote.filter((w) => attacks.includes(w))).toEqual([]);
    for (const a of attacks) expect(kept(state, a), a).toBe(false);
    for (const a of allowed) expect(kept(state, a), a).toBe(true);
    expect(wrote).toContain("shell_snapshots/s.sh");
    expect(readdirSync(path.join(state, "shell_snapshots"))).toEqual([]);
  });

  it("refuses Gemini CLI an extension, a command, the ripgrep it runs and any project's memory, and keeps no new name at its top level or in tmp; the project's chats and logs stay writable", () => {
    const slug = `project-gemini-${runs}`;
    const memory = [
      `tmp/${slug}/memory/MEMORY.md`,
      `tmp/${slug}/memory/GEMINI.md`,
      "tmp/other/memory/skills/x/SKILL.md",
      `tmp/${slug}/logs.json`,
    ];
    const attacks = [
      ...memory,
      "extensions/x/gemini-extension.json",
      "extensions/y/gemini-extension.json",
      "commands/x.toml",
      "tmp/bin/rg",
      "foo.js",
      "projects.json",
      "history/p/.git/config",
    ];
    const allowed = [`tmp/${slug}/chats/session.jsonl`, `tmp/${slug}/logs/logs.json`, "installation_id"];
    const before = { installation_id: "", "extensions/y/gemini-extension.json": "{}", "commands/y.toml": "" };
    const { wrote, state } = tryWrites("gemini", before, [...attacks, ...allowed]);
    for (const a of attacks) expect(kept(state, a), a).toBe(false);
    for (const a of allowed) expect(kept(state, a), a).toBe(true);
    // Its top level and history are the session's own (a private folder each): a new name written there is thrown
    // away; what was there (its extensions, its commands) and the ripgrep it runs are refused.
    expect(wrote.filter((w) => attacks.includes(w))).toEqual([...memory, "foo.js", "projects.json", "history/p/.git/config"]);
    expect(readdirSync(state).sort()).toEqual(["commands", "extensions", "history", "installation_id", "tmp"]);
  });

  it("gives Gemini CLI a copy of projects.json that names the project's folder under tmp, the one whose chats stay", () => {
    const home = path.join(scratch, "home-gemini-registry");
    const project = path.join(scratch, "Registry Project");
    const state = path.join(home, ".gemini");
    mkdirSync(state, { recursive: true });
    mkdirSync(project);
    writeFileSync(path.join(state, "projects.json"), JSON.stringify({ projects: { "/elsewhere": "elsewhere" } }));
    const bin = path.join(scratch, "bin-gemini-registry", "gemini");
    mkdirSync(path.dirname(bin));
    // What the real Gemini CLI does: finds its folder in projects.json and writes its chat there.
    writeFileSync(bin, '#!/bin/sh\ncp "$HOME/.gemini/projects.json" "$HOME/.gemini/tmp/registry-project/chats/seen.json"\n');
    chmodSync(bin, 0o755);
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
    try {
      expect(spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, cwd: project, encoding: "utf8" }).status).toBe(0);
    } finally {
      c.release();
    }
    const seen = JSON.parse(readFileSync(path.join(state, "tmp", "registry-project", "chats", "seen.json"), "utf8"));
    expect(seen).toEqual({ projects: { "/elsewhere": "elsewhere", [project]: "registry-project" } });
    // The real one as it was.
    expect(JSON.parse(readFileSync(path.join(state, "projects.json"), "utf8"))).toEqual({ projects: { "/elsewhere": "elsewhere" } });
  });

  it("keeps only what is written in the allow-listed entries of a state folder, whatever the names in it and the names tried (property)", () => {
    const tools: AgentTool[] = ["claude", "codex", "gemini"];
    const listed = (tool: AgentTool) => [...FOLDERS[tool], ...PRIVATE[tool], ...FILES[tool], ...COPIES[tool]];
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
            // Codex's installation_id is made when not there (Codex does not start without it).
            if (inner === undefined)
              return FILES[tool].includes(t) && (existing.includes(t) || (tool === "codex" && t === "installation_id"));
            return FOLDERS[tool].includes(top as string) && !existing.includes(top as string);
          });
          expect(tries.filter((t) => kept(state, t)).sort()).toEqual(expected.sort());
        },
      ),
      { numRuns: 6 },
    );
  });
});

describe("the folder Gemini CLI keeps a project in under tmp (geminiProject)", () => {
  const at = (files: Record<string, string>) => {
    const dir = mkdtempSync(path.join(scratch, "gemini-dir-"));
    for (const [rel, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), content);
    }
    return dir;
  };
  const cwd = path.join(scratch, "My Project");
  mkdirSync(cwd, { recursive: true });

  it("is the one projects.json names for the project, unless another project's .project_root holds it", () => {
    const registry = JSON.stringify({ projects: { [cwd]: "named" } });
    expect(geminiProject(at({ "projects.json": registry }), cwd)).toBe("named");
    expect(geminiProject(at({ "projects.json": registry, "tmp/named/.project_root": cwd }), cwd)).toBe("named");
    expect(geminiProject(at({ "projects.json": registry, "tmp/named/.project_root": "/elsewhere" }), cwd)).toBe("my-project");
  });

  it("is the one whose .project_root names the project, else its base name made lower-case, past those other projects hold", () => {
    expect(geminiProject(at({ "tmp/found/.project_root": `${cwd}\n` }), cwd)).toBe("found");
    expect(geminiProject(at({}), cwd)).toBe("my-project");
    const taken = JSON.stringify({ projects: { "/other": "my-project" } });
    expect(geminiProject(at({ "projects.json": taken, "tmp/my-project-1/.project_root": "/another" }), cwd)).toBe("my-project-2");
  });

  it("takes a tmp that is no folder as no project there", () => {
    expect(geminiProject(at({ tmp: "" }), cwd)).toBe("my-project");
  });

  it("takes a projects.json that is no registry, or over its budget, as none", () => {
    expect(geminiProject(at({ "projects.json": "{not json" }), cwd)).toBe("my-project");
    const huge = JSON.stringify({ projects: { [cwd]: "named" }, pad: "x".repeat(1024 * 1024) });
    expect(geminiProject(at({ "projects.json": huge }), cwd)).toBe("my-project");
  });
});
