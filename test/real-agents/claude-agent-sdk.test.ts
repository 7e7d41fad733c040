/*
 * twinlock/claude-agent-sdk through the whole loop: the SDK's query() drives
 * the real Claude Code binary (2.1.328, from scripts/install-agent-clis.sh),
 * pointed at a scripted Anthropic Messages server on 127.0.0.1; the adapter's
 * PreToolUse callback and the planner's in-process MCP server answer it.
 * Opt-in: TWINLOCK_REAL_AGENTS=1.
 */
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Options, query } from "@anthropic-ai/claude-agent-sdk";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { gateHooks, plannerMcpServer } from "../../src/adapters/claude-agent-sdk.js";
import { raiseStop } from "../../src/gate/hard-stops.js";
import { admitAndBind, boundPlannerRun, consentedRun, decideWhenFrozen, WRITTEN } from "../../src/test-support/adapter-runs.js";
import { EXECUTOR, freeze, type GateRun, PLANNER, removeGateRuns, storeOf, workflowOf } from "../../src/test-support/run-fixture.js";
import { AGENT_CLIS, missingCli } from "./agent-clis.js";
import { anthropicToolCalls, anthropicToolResults, type ToolUse } from "./anthropic-messages.js";
import { type ModelServer, startModelServer } from "./model-server.js";

const ENABLED = process.env.TWINLOCK_REAL_AGENTS === "1";
const missing = ENABLED ? missingCli("claude") : undefined;
const servers: ModelServer[] = [];
const homes: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
afterAll(removeGateRuns);

/** One query() run whose scripted model makes `calls` in order; what Claude Code sent back as each tool's result. */
async function runClaude(calls: ToolUse[], cwd: string, o: Pick<Options, "hooks" | "mcpServers" | "allowedTools">): Promise<string[]> {
  const server = await startModelServer(anthropicToolCalls(calls));
  servers.push(server);
  const home = mkdtempSync(path.join(os.tmpdir(), "twinlock-claude-sdk-home-"));
  homes.push(home);
  const cli = AGENT_CLIS.claude.command({ project: cwd, home, modelUrl: server.url }, "go", false);
  const q = query({
    prompt: "follow the plan",
    options: {
      cwd,
      pathToClaudeCodeExecutable: AGENT_CLIS.claude.bin,
      env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: os.tmpdir(), ...cli.env, ENABLE_TOOL_SEARCH: "false" },
      permissionMode: "acceptEdits",
      model: "claude-sonnet-4-5",
      settingSources: [],
      ...o,
    },
  });
  for await (const _message of q) {
    // Drained: the run ends when Claude Code does.
  }
  return anthropicToolResults(server.requests.map((r) => r.body));
}

const write = (file: string): ToolUse => ({ name: "Write", input: { file_path: file, content: WRITTEN } });

describe.skipIf(!ENABLED || missing !== undefined)("twinlock/claude-agent-sdk with the real Claude Code (TWINLOCK_REAL_AGENTS=1)", () => {
  it("denies the executor's Write before admission, allows it inside a target after, and denies outside and after a stop", async () => {
    // New files (Claude Code refuses a Write to a file it has not Read before any hook runs): A1's target and one in no target.
    const { g } = await consentedRun();
    const target = path.join(realpathSync(g.dir), "cart", "cache_race_test.go");
    const outside = path.join(realpathSync(g.dir), "cart", "extra.go");
    const unbound = { TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: EXECUTOR, TWINLOCK_SESSION: "5".repeat(64) };
    const gated = (env: NodeJS.ProcessEnv) => ({ hooks: gateHooks({ home: g.home, env, cwd: g.dir }), allowedTools: ["Write"] });
    expect((await runClaude([write(target)], g.dir, gated(unbound))).join("\n")).toMatch(/no session of MD-30/);
    expect(existsSync(target)).toBe(false);
    const { env } = await admitAndBind(g);
    await runClaude([write(target)], g.dir, gated(env));
    expect(readFileSync(target, "utf8")).toBe(WRITTEN);
    expect((await runClaude([write(outside)], g.dir, gated(env))).join("\n")).toMatch(/outside the admitted plan's targets/);
    expect(existsSync(outside)).toBe(false);
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "alice" });
    rmSync(target);
    expect((await runClaude([write(target)], g.dir, gated(env))).join("\n")).toMatch(/no session of MD-30/);
    expect(existsSync(target)).toBe(false);
  }, 180_000);

  it("denies the Write after an allowed one once the checkout was rewritten, the run re-frozen, or a stop raised, naming the change", async () => {
    const changes: Array<[string, (g: GateRun, checkout: string) => Promise<void>, RegExp]> = [
      [
        "checkout rewritten",
        async (_g, checkout) => {
          const file = path.join(checkout, "action_plan.json");
          chmodSync(file, 0o644);
          writeFileSync(file, readFileSync(file, "utf8").replace(/"risk": "low"/g, '"risk": "high"'));
        },
        /the checkout's action_plan\.json was edited since it was approved/,
      ],
      [
        "re-frozen",
        async (g) => {
          const other = path.join(g.dir, "handoff-md-27");
          cpSync(g.handoff, other, { recursive: true });
          await freeze(g, { planner: "MD-27", handoff: other });
        },
        /was written since the session was bound: MD-27's handoff was frozen again/,
      ],
      [
        "stopped",
        async (g) => {
          await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "alice" });
        },
        /the session was ended at .*: !STOP:halt was raised on the run by alice/,
      ],
    ];
    for (const [name, change, reason] of changes) {
      const { g } = await consentedRun({ planners: ["MD-27", PLANNER] });
      const target = path.join(realpathSync(g.dir), "cart", "cache_race_test.go");
      const { env, binding } = await admitAndBind(g);
      let changed = false;
      // After Claude Code ran the first Write: the change, then the file removed so the second Write would create it again.
      const afterWrite = async () => {
        if (!changed) {
          changed = true;
          await change(g, binding.checkout_dir as string);
          rmSync(target);
        }
        return {};
      };
      const shown = await runClaude([write(target), write(target)], g.dir, {
        hooks: { ...gateHooks({ home: g.home, env, cwd: g.dir }), PostToolUse: [{ hooks: [afterWrite] }] },
        allowedTools: ["Write"],
      });
      expect(changed, name).toBe(true);
      expect(shown.join("\n"), name).toMatch(reason);
      expect(existsSync(target), name).toBe(false);
    }
  }, 300_000);

  it("lets the planner's agent freeze and wait, and hands it a person's signed decision with the comments", async () => {
    const { g, env } = await boundPlannerRun();
    const agent = runClaude(
      [
        { name: "mcp__twinlock__twinlock_submit_handoff", input: {} },
        { name: "mcp__twinlock__twinlock_request_review", input: {} },
      ],
      g.dir,
      {
        hooks: gateHooks({ home: g.home, env, cwd: g.dir }),
        mcpServers: { twinlock: plannerMcpServer({ home: g.home, env, pollMs: 50 }) },
        allowedTools: ["mcp__twinlock__twinlock_submit_handoff", "mcp__twinlock__twinlock_request_review"],
      },
    );
    await decideWhenFrozen(g, "changes_requested", "Add Windows coverage");
    const shown = (await agent).join("\n");
    expect(shown).toMatch(/decision\\+":\\+"changes_requested/);
    expect(shown).toMatch(/Add Windows coverage/);
    expect(workflowOf(g).state).toBe("plan_revision_pending");
  }, 180_000);
});

describe.skipIf(ENABLED && missing === undefined)("twinlock/claude-agent-sdk with the real Claude Code", () => {
  it.skip(`skipped: ${missing ?? "set TWINLOCK_REAL_AGENTS=1 after scripts/install-agent-clis.sh"}`, () => {});
});
