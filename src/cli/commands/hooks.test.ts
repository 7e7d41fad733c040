import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { codexHookHash } from "../../hook/codex-trust.js";
import { PACKAGE_ROOT } from "../../package-root.js";
import { runCli, STACK_FRAME } from "../../test-support/run-cli.js";

let dir: string;
const cwd = process.cwd();
const codexHome = process.env.CODEX_HOME;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-hooks-"));
  process.chdir(dir);
  // Codex's own config (where --trust writes) in the test's folder, never the user's.
  process.env.CODEX_HOME = path.join(dir, "codex-home");
});
afterEach(() => {
  process.chdir(cwd);
  if (codexHome === undefined) delete process.env.CODEX_HOME;
  else process.env.CODEX_HOME = codexHome;
  rmSync(dir, { recursive: true, force: true });
});

/** The command `hooks install` writes: env, node and twinlock's entry point, each by its absolute path. */
const command = (agent: string) =>
  `/usr/bin/env -u NODE_OPTIONS ${process.execPath} ${path.join(PACKAGE_ROOT, "bin", "twinlock.cjs")} hook ${agent} --home ${path.resolve(process.env.TWINLOCK_HOME as string)}`;

const EXISTING = {
  claude: [
    ".claude/settings.json",
    {
      model: "opus",
      permissions: { allow: ["Bash(npm test)"], deny: ["Read(./.env)"] },
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./lint-bash.sh" }] }],
        Stop: [{ hooks: [{ type: "command", command: "notify" }] }],
      },
    },
  ],
  codex: [".codex/hooks.json", { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./guard.sh" }] }] } }],
  gemini: [
    ".gemini/settings.json",
    { theme: "dark", hooks: { BeforeTool: [{ matcher: "read_file", hooks: [{ type: "command", command: "./log.sh" }] }] } },
  ],
  cursor: [
    ".cursor/hooks.json",
    { version: 1, hooks: { afterFileEdit: [{ command: "./format.sh" }], beforeShellExecution: [{ command: "./audit.sh" }] } },
  ],
} as const;

describe("twinlock hooks install / uninstall", () => {
  it("warns in one line when the hook would name a gate home that does not exist, and not when it does", async () => {
    const missing = path.join(dir, "no-such-home");
    const r = await runCli(["hooks", "install", "--agent", "claude", "--home", missing]);
    expect(r.code, r.output).toBe(0);
    const warnings = r.stdout.split("\n").filter((l) => l.startsWith("warning: "));
    expect(warnings).toEqual([
      `warning: the gate home ${missing} the hook names does not exist, so no exec or plan session can be bound there and the hook denies every write, shell and outward call; make it (\`twinlock trust pin\`) or install with --home DIR, the home you use`,
    ]);
    const json = await runCli(["hooks", "install", "--agent", "claude", "--home", missing, "--json"]);
    expect(JSON.parse(json.stdout).warnings).toHaveLength(1);
    mkdirSync(missing);
    const quiet = await runCli(["hooks", "install", "--agent", "claude", "--home", missing]);
    expect(quiet.stdout).not.toContain("warning:");
    expect((await runCli(["hooks", "uninstall", "--agent", "claude", "--home", path.join(dir, "gone")])).stdout).not.toContain("warning:");
  });

  for (const [agent, [file, config]] of Object.entries(EXISTING)) {
    it(`adds the ${agent} hook beside unrelated entries, is idempotent, and uninstall gives back the file it found`, async () => {
      mkdirSync(path.dirname(file), { recursive: true });
      const original = `${JSON.stringify(config, null, 2)}\n`;
      writeFileSync(file, original);
      expect((await runCli(["hooks", "install", "--agent", agent])).code).toBe(0);
      const installed = readFileSync(file, "utf8");
      expect(installed).toContain(JSON.stringify(command(agent)));
      for (const kept of JSON.stringify(config).match(/"command":"[^"]+"/g) ?? []) expect(installed.replace(/\s/g, "")).toContain(kept);
      expect((await runCli(["hooks", "install", "--agent", agent])).code).toBe(0);
      expect(readFileSync(file, "utf8")).toBe(installed);
      expect((await runCli(["hooks", "uninstall", "--agent", agent])).code).toBe(0);
      expect(readFileSync(file, "utf8")).toBe(original);
    });
  }

  it("writes Claude Code's match-all matcher, onFailure block, a timeout and deny rules on the gate home and key files", async () => {
    await runCli(["hooks", "install", "--agent", "claude"]);
    const s = JSON.parse(readFileSync(".claude/settings.json", "utf8"));
    const home = path.resolve(process.env.TWINLOCK_HOME as string);
    expect(s.hooks.PreToolUse[0]).toEqual({
      matcher: ".*",
      hooks: [{ type: "command", command: command("claude"), timeout: 10, onFailure: "block" }],
    });
    expect(s.permissions.deny).toEqual([`Edit(/${home}/**)`, `Write(/${home}/**)`, "Edit(**/*.key)", "Write(**/*.key)"]);
  });

  it("names node and twinlock by absolute paths (no PATH lookup) and writes the same bytes when installed again", async () => {
    for (const agent of ["claude", "codex", "gemini", "cursor"]) {
      await runCli(["hooks", "install", "--agent", agent]);
      const file = {
        claude: ".claude/settings.json",
        codex: ".codex/hooks.json",
        gemini: ".gemini/settings.json",
        cursor: ".cursor/hooks.json",
      }[agent] as string;
      const first = readFileSync(file, "utf8");
      const words = command(agent).split(" ");
      expect(words.slice(0, 5).every((w, i) => i === 1 || i === 2 || path.isAbsolute(w))).toBe(true);
      expect(first).toContain(JSON.stringify(command(agent)));
      const again = await runCli(["hooks", "install", "--agent", agent]);
      expect(again.stdout).toContain("unchanged:");
      expect(readFileSync(file, "utf8")).toBe(first);
    }
  });

  it("replaces an older install that found twinlock on PATH, and uninstall removes that form too", async () => {
    mkdirSync(".claude");
    const old = {
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "env -u NODE_OPTIONS twinlock hook claude --home /x" }] }],
      },
    };
    writeFileSync(".claude/settings.json", JSON.stringify(old));
    await runCli(["hooks", "install", "--agent", "claude"]);
    const s = JSON.parse(readFileSync(".claude/settings.json", "utf8"));
    expect(s.hooks.PreToolUse).toHaveLength(1);
    expect(s.hooks.PreToolUse[0].hooks[0].command).toBe(command("claude"));
  });

  it("sends every tool to the hook: Claude Code, Codex and Gemini CLI match .*, Cursor's preToolUse has no matcher", async () => {
    for (const agent of ["codex", "gemini", "cursor"]) await runCli(["hooks", "install", "--agent", agent]);
    expect(JSON.parse(readFileSync(".codex/hooks.json", "utf8")).hooks.PreToolUse[0].matcher).toBe(".*");
    expect(JSON.parse(readFileSync(".gemini/settings.json", "utf8")).hooks.BeforeTool[0].matcher).toBe(".*");
    expect(JSON.parse(readFileSync(".cursor/hooks.json", "utf8")).hooks.preToolUse[0]).not.toHaveProperty("matcher");
  });

  it("lets Gemini CLI hand the hook TWINLOCK_* in CI: merges them into security.environmentVariableRedaction.allowed, keeping the user's own", async () => {
    mkdirSync(".gemini");
    const original = `${JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" }, environmentVariableRedaction: { allowed: ["MY_TOKEN_NAME", "TWINLOCK_RUN"], enabled: true } } }, null, 2)}\n`;
    writeFileSync(".gemini/settings.json", original);
    await runCli(["hooks", "install", "--agent", "gemini"]);
    const s = JSON.parse(readFileSync(".gemini/settings.json", "utf8"));
    expect(s.security.auth).toEqual({ selectedType: "gemini-api-key" });
    expect(s.security.environmentVariableRedaction).toEqual({
      allowed: [
        "MY_TOKEN_NAME",
        "TWINLOCK_RUN",
        "TWINLOCK_EXECUTOR",
        "TWINLOCK_PLANNER",
        "TWINLOCK_HANDOFF",
        "TWINLOCK_SESSION",
        "TWINLOCK_HOME",
      ],
      enabled: true,
    });
    await runCli(["hooks", "uninstall", "--agent", "gemini"]);
    expect(JSON.parse(readFileSync(".gemini/settings.json", "utf8")).security.environmentVariableRedaction).toEqual({
      allowed: ["MY_TOKEN_NAME"],
      enabled: true,
    });
  });

  it("says Codex does not yet trust its hook, with the command, hash and what to do; status exits 1 until --trust writes the entry Codex reads", async () => {
    const toml = path.join(process.env.CODEX_HOME as string, "config.toml");
    mkdirSync(path.dirname(toml));
    const own = `model = "gpt-5.5"\n\n[projects.${JSON.stringify(dir)}]\ntrust_level = "trusted"\n`;
    writeFileSync(toml, own);
    const first = await runCli(["hooks", "install", "--agent", "codex"]);
    const hash = codexHookHash(command("codex"), ".*");
    const key = `${path.join(dir, ".codex", "hooks.json")}:pre_tool_use:0:0`;
    expect(first.stdout).toContain("Codex does NOT yet trust this hook");
    expect(first.stdout).toContain(hash);
    expect(first.stdout).toContain("--trust");
    expect(readFileSync(toml, "utf8")).toBe(own);
    const untrusted = await runCli(["hooks", "status", "--agent", "codex"]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stdout).toContain("installed, NOT TRUSTED");
    expect(untrusted.stdout).toMatch(/Codex does not trust it .*--trust/);
    const trusted = await runCli(["hooks", "install", "--agent", "codex", "--trust"]);
    expect(trusted.stdout).toContain(`Codex runs: ${command("codex")}`);
    expect(readFileSync(toml, "utf8")).toBe(`${own}\n[hooks.state.${JSON.stringify(key)}]\ntrusted_hash = "${hash}"\n`);
    const status = await runCli(["hooks", "status", "--agent", "codex"]);
    expect(status.stdout).toContain("installed, trusted");
    expect(status.stdout).not.toContain("problem:");
    // Installing again with the same settings changes no byte, so the trust holds.
    await runCli(["hooks", "install", "--agent", "codex"]);
    expect((await runCli(["hooks", "status", "--agent", "codex"])).stdout).toContain("installed, trusted");
  });

  it("installs Codex's user hook beside its config.toml, in $CODEX_HOME, and trusts it there under that path", async () => {
    const r = await runCli(["hooks", "install", "--agent", "codex", "--user", "--trust"]);
    expect(r.code).toBe(0);
    const hooksJson = path.join(process.env.CODEX_HOME as string, "hooks.json");
    expect(JSON.parse(readFileSync(hooksJson, "utf8")).hooks.PreToolUse[0].hooks[0].command).toBe(command("codex"));
    expect(readFileSync(path.join(process.env.CODEX_HOME as string, "config.toml"), "utf8")).toContain(
      `[hooks.state.${JSON.stringify(`${hooksJson}:pre_tool_use:0:0`)}]`,
    );
  });

  it("status exits 1 for Claude Code's disableAllHooks, an older command found on PATH, a narrow matcher, or no hook for the tool named", async () => {
    expect((await runCli(["hooks", "status", "--agent", "claude"])).code).toBe(1);
    await runCli(["hooks", "install", "--agent", "claude"]);
    expect((await runCli(["hooks", "status", "--agent", "claude"])).code).toBe(0);
    const s = JSON.parse(readFileSync(".claude/settings.json", "utf8"));
    writeFileSync(".claude/settings.local.json", JSON.stringify({ disableAllHooks: true }));
    let r = await runCli(["hooks", "status", "--agent", "claude"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('"disableAllHooks": true switches every hook off');
    rmSync(".claude/settings.local.json");
    s.hooks.PreToolUse[0].matcher = "Bash|Write";
    s.hooks.PreToolUse[0].hooks[0].command = "env -u NODE_OPTIONS twinlock hook claude --home /x";
    writeFileSync(".claude/settings.json", JSON.stringify(s));
    r = await runCli(["hooks", "status", "--agent", "claude"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("sends only some tools to the hook");
    expect(r.stdout).toContain("finds `twinlock` (and node) on the tool's PATH");
  });

  it("--dry-run prints the diff and writes nothing", async () => {
    const r = await runCli(["hooks", "install", "--agent", "gemini", "--dry-run"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("+++ ");
    expect(r.stdout).toContain("twinlock.cjs hook gemini");
    expect(() => readFileSync(".gemini/settings.json")).toThrow();
  });

  it("refuses, in one line with exit 2 and writing nothing, a file that is not JSON, has a key twice, or is a link", async () => {
    mkdirSync(".claude");
    const cases: Array<[string, () => void, RegExp]> = [
      ["not JSON", () => writeFileSync(".claude/settings.json", "{ nope"), /is not valid JSON/],
      ["duplicate", () => writeFileSync(".claude/settings.json", '{"hooks":{},"hooks":{"PreToolUse":[]}}'), /has the key hooks twice/],
      [
        "symlink",
        () => {
          rmSync(".claude/settings.json", { force: true });
          writeFileSync("real.json", "{}");
          symlinkSync(path.join(dir, "real.json"), ".claude/settings.json");
        },
        /is a symbolic link/,
      ],
    ];
    for (const [, make, message] of cases) {
      make();
      const before = readFileSync(".claude/settings.json", "utf8");
      const r = await runCli(["hooks", "install", "--agent", "claude"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.output).not.toMatch(STACK_FRAME);
      expect(readFileSync(".claude/settings.json", "utf8")).toBe(before);
    }
  });

  it("refuses an agent tool it does not know", async () => {
    const r = await runCli(["hooks", "install", "--agent", "vscode"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/one of claude, codex, gemini, cursor/);
  });

  it("status names the gate home each hook reads sessions in, exits 1 when that home does not exist, and exits 1 when no tool has a hook", async () => {
    const none = await runCli(["hooks", "status"]);
    expect(none.code).toBe(1);
    expect(none.stdout).toContain("no twinlock hook is installed for any agent tool here");
    const missing = path.join(dir, "no-such-home");
    await runCli(["hooks", "install", "--agent", "claude", "--home", missing]);
    const r = await runCli(["hooks", "status", "--agent", "claude"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`the hook reads sessions in the gate home ${missing}`);
    expect(r.stdout).toContain(`the gate home ${missing} the hook names does not exist`);
    mkdirSync(missing);
    expect((await runCli(["hooks", "status", "--agent", "claude"])).code).toBe(0);
  });
});
