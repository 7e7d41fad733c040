/*
 * twinlock/claude-agent-sdk's callbacks as Claude Code calls them (its
 * PreToolUse hook input and canUseTool arguments), through the real package's
 * types and MCP server. The whole loop — the Claude Code binary the SDK
 * drives, against a scripted Anthropic Messages server — is in
 * test/real-agents/claude-agent-sdk.test.ts (TWINLOCK_REAL_AGENTS=1).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { CanUseTool } from "@anthropic-ai/claude-agent-sdk";
import { afterAll, describe, expect, it } from "vitest";
import { consentedRun, executorScenarios, WRITE_SCOPES } from "../test-support/adapter-runs.js";
import { removeGateRuns } from "../test-support/run-fixture.js";
import { gateCanUseTool, gateHooks, plannerMcpServer } from "./claude-agent-sdk.js";

afterAll(removeGateRuns);

const signal = new AbortController().signal;
const asking = { signal, toolUseID: "t1", requestId: "r1" } as Parameters<CanUseTool>[2];

describe("twinlock/claude-agent-sdk executor side (the PreToolUse callback as Claude Code calls it)", () => {
  // Claude Code's own Write tool; the adapter's failure is an input whose reading throws, an unknown tool Claude Code's `write_file`.
  executorScenarios(async (o) => {
    const hook = gateHooks({ home: o.home, env: o.env, cwd: o.cwd }).PreToolUse[0]?.hooks[0];
    if (!hook) throw new Error("no PreToolUse hook");
    const broken = o.scopes !== WRITE_SCOPES && Object.keys(o.scopes).length > 0;
    const toolName = Object.keys(o.scopes).length === 0 ? "write_file" : "Write";
    const each: string[] = [];
    for (const [i, p] of o.paths.entries()) {
      const toolInput = broken
        ? Object.defineProperty({}, "file_path", {
            enumerable: true,
            get() {
              throw new Error("scope exploded");
            },
          })
        : { file_path: p, content: o.content };
      const out = (await hook(
        {
          hook_event_name: "PreToolUse",
          tool_name: toolName,
          tool_input: toolInput,
          tool_use_id: `t${i}`,
          session_id: "s",
          transcript_path: "",
          cwd: o.cwd,
        },
        `t${i}`,
        { signal },
      )) as { hookSpecificOutput?: { permissionDecision: string; permissionDecisionReason: string } };
      if (out.hookSpecificOutput?.permissionDecision === "deny") {
        each.push(out.hookSpecificOutput.permissionDecisionReason);
        continue;
      }
      // Claude Code runs the Write the hook said nothing against.
      writeFileSync(path.resolve(o.cwd, p), o.content);
      await o.onWritten?.();
      each.push("");
    }
    return { shown: each.join("\n"), each };
  });
});

describe("twinlock/claude-agent-sdk canUseTool", () => {
  it("denies what the gate denies and hands an allowed call to the application's own prompt, never allowing it by itself", async () => {
    const { g, target } = await consentedRun();
    const env = { TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: "MD-30", TWINLOCK_SESSION: "5".repeat(64) };
    const denied = await gateCanUseTool({ home: g.home, env })("Write", { file_path: target, content: "x" }, asking);
    expect(denied).toMatchObject({ behavior: "deny", message: expect.stringMatching(/no session of MD-30/) });
    const { admitAndBind } = await import("../test-support/adapter-runs.js");
    const bound = await admitAndBind(g);
    const alone = await gateCanUseTool({ home: g.home, env: bound.env })("Write", { file_path: target, content: "x" }, asking);
    expect(alone).toMatchObject({ behavior: "deny", message: expect.stringMatching(/needs a person's permission/) });
    const asked: string[] = [];
    const next = await gateCanUseTool({
      home: g.home,
      env: bound.env,
      next: async (name) => {
        asked.push(name);
        return { behavior: "deny", message: "the person said no" };
      },
    })("Write", { file_path: target, content: "x" }, asking);
    expect(asked).toEqual(["Write"]);
    expect(next).toMatchObject({ behavior: "deny", message: "the person said no" });
  });
});

describe("twinlock/claude-agent-sdk planner side", () => {
  it("serves the planner's tools as the MCP server named twinlock, with no tool that reviews, consents or approves", () => {
    const server = plannerMcpServer({ home: "/nonexistent" });
    expect(server).toMatchObject({ type: "sdk", name: "twinlock" });
  });
});
