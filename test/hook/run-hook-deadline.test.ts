/*
 * The built hook (dist/twinlock-hook.cjs, as installed) as a real process:
 * its deadline answers the tool's deny even while the judging blocks its
 * thread, and a crafted patch is judged long before the deadline.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type Agent } from "../../src/hook/agent-contracts.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

const home = mkdtempSync(path.join(os.tmpdir(), "twinlock-hook-deadline-"));
beforeAll(ensureBuilt, 300_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

function hook(agent: Agent, input: unknown, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [DIST_BIN, "hook", agent, "--home", home], {
    input: JSON.stringify(input),
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
}

/** The deny reason in each tool's own deny form (exit 0 and its JSON), or undefined when the answer is not a deny. */
function denyReason(agent: Agent, r: ReturnType<typeof hook>): string | undefined {
  if (r.status !== 0 || r.stdout === "") return undefined;
  const out = JSON.parse(r.stdout);
  if (agent === "claude" || agent === "codex")
    return out.hookSpecificOutput?.permissionDecision === "deny" ? out.hookSpecificOutput.permissionDecisionReason : undefined;
  if (agent === "gemini") return out.decision === "deny" ? out.reason : undefined;
  return out.permission === "deny" ? out.agent_message : undefined;
}

const WRITE: Record<Agent, unknown> = {
  claude: { tool_name: "Write", tool_input: { file_path: "/tmp/x", content: "x" }, cwd: "/tmp" },
  codex: { tool_name: "Write", tool_input: { file_path: "/tmp/x", content: "x" }, cwd: "/tmp" },
  gemini: { tool_name: "write_file", tool_input: { file_path: "/tmp/x", content: "x" }, cwd: "/tmp" },
  cursor: { tool_name: "Write", tool_input: { file_path: "/tmp/x", content: "x" }, cwd: "/tmp" },
};

describe("the hook's own deadline", () => {
  it("answers each tool's deny when the judging blocks its thread for good (it runs in a worker the deadline ends)", () => {
    for (const agent of AGENTS) {
      const r = hook(agent, WRITE[agent], { TWINLOCK_HOOK_TEST_STALL: "1", TWINLOCK_HOOK_TIMEOUT_MS: "300" });
      expect(r.signal, agent).toBeNull();
      expect(denyReason(agent, r), `${agent}: ${r.stdout}${r.stderr}`).toMatch(/did not decide within 300 ms; denied/);
    }
  });

  it("judges a Codex patch whose line is 400,000 spaces before an x, and denies it for want of a session (the old quadratic trim ran past every deadline: issue 24)", () => {
    const patch = `*** Begin Patch\n*** Add File: /elsewhere/x.txt\n+${" ".repeat(400_000)}x\n*** End Patch\n`;
    const r = hook("codex", { tool_name: "apply_patch", tool_input: { command: patch }, cwd: "/tmp" });
    expect(denyReason("codex", r)).toMatch(/apply_patch denied: no twinlock session is bound/);
  }, 60_000);
});
