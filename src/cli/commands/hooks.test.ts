import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli, STACK_FRAME } from "../../test-support/run-cli.js";

let dir: string;
const cwd = process.cwd();
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-hooks-"));
  process.chdir(dir);
});
afterEach(() => {
  process.chdir(cwd);
  rmSync(dir, { recursive: true, force: true });
});

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
  for (const [agent, [file, config]] of Object.entries(EXISTING)) {
    it(`adds the ${agent} hook beside unrelated entries, is idempotent, and uninstall gives back the file it found`, async () => {
      mkdirSync(path.dirname(file), { recursive: true });
      const original = `${JSON.stringify(config, null, 2)}\n`;
      writeFileSync(file, original);
      expect((await runCli(["hooks", "install", "--agent", agent])).code).toBe(0);
      const installed = readFileSync(file, "utf8");
      expect(installed).toContain(`env -u NODE_OPTIONS twinlock hook ${agent}`);
      for (const kept of JSON.stringify(config).match(/"command":"[^"]+"/g) ?? []) expect(installed.replace(/\s/g, "")).toContain(kept);
      expect((await runCli(["hooks", "install", "--agent", agent])).code).toBe(0);
      expect(readFileSync(file, "utf8")).toBe(installed);
      expect((await runCli(["hooks", "uninstall", "--agent", agent])).code).toBe(0);
      expect(readFileSync(file, "utf8")).toBe(original);
    });
  }

  it("writes Claude Code's matcher, onFailure block, a timeout and deny rules on the gate home and key files", async () => {
    await runCli(["hooks", "install", "--agent", "claude"]);
    const s = JSON.parse(readFileSync(".claude/settings.json", "utf8"));
    const home = path.resolve(process.env.TWINLOCK_HOME as string);
    expect(s.hooks.PreToolUse[0]).toEqual({
      matcher: "Bash|Write|Edit|MultiEdit|NotebookEdit|mcp__.*",
      hooks: [{ type: "command", command: `env -u NODE_OPTIONS twinlock hook claude --home ${home}`, timeout: 10, onFailure: "block" }],
    });
    expect(s.permissions.deny).toEqual([`Edit(/${home}/**)`, `Write(/${home}/**)`, "Edit(**/*.key)", "Write(**/*.key)"]);
  });

  it("--dry-run prints the diff and writes nothing", async () => {
    const r = await runCli(["hooks", "install", "--agent", "gemini", "--dry-run"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("+++ ");
    expect(r.stdout).toContain("twinlock hook gemini");
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
});
