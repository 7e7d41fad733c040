import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runsScriptRuntime, scriptDrivesClaudeCode } from "./runs-script-runtime.js";

describe("runsScriptRuntime", () => {
  it("tells an SDK agent's node script, also under sh -c, from an agent CLI", () => {
    expect(runsScriptRuntime(["node", "agent.mjs"])).toBe(true);
    expect(runsScriptRuntime(["/usr/bin/node", "agent.mjs"])).toBe(true);
    expect(runsScriptRuntime(["sh", "-c", "node agent.mjs cart/cache.go"])).toBe(true);
    expect(runsScriptRuntime(["claude"])).toBe(false);
    expect(runsScriptRuntime(["codex", "exec", "node"])).toBe(false);
    expect(runsScriptRuntime(["sh", "-c", "claude -p hi"])).toBe(false);
    expect(runsScriptRuntime([])).toBe(false);
  });
});

describe("scriptDrivesClaudeCode (the agent writes the script)", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const folder = () => {
    const d = mkdtempSync(path.join(os.tmpdir(), "twinlock-script-head-"));
    dirs.push(d);
    return d;
  };

  it("sees the Claude Agent SDK named in a script, run directly or under sh -c", () => {
    const d = folder();
    writeFileSync(path.join(d, "agent.mjs"), 'await import("twinlock/claude-agent-sdk");\n');
    expect(scriptDrivesClaudeCode(["node", "--no-warnings", "agent.mjs"], d)).toBe(true);
    expect(scriptDrivesClaudeCode(["sh", "-c", "node agent.mjs"], d)).toBe(true);
    writeFileSync(path.join(d, "other.mjs"), 'await import("twinlock/ai-sdk");\n');
    expect(scriptDrivesClaudeCode(["node", "other.mjs"], d)).toBe(false);
  });

  it("never waits on a script that is a FIFO with no writer, and reads it as naming nothing", () => {
    const d = folder();
    execFileSync("mkfifo", [path.join(d, "agent.mjs")]);
    expect(scriptDrivesClaudeCode(["node", "agent.mjs"], d)).toBe(false);
  });
});
