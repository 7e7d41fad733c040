/**
 * `npx tsx bench/adapters.mts`: the cost each in-process adapter adds to one
 * allowed tool call (a write inside an admitted target), against the same
 * tool called bare: p50 and p99 of N calls (BENCH_ADAPTER_CALLS, default 500),
 * on a run admitted and bound as `twinlock exec` does (this process standing
 * for the agent below it). Target: ≤ 2 ms added at p50. Uses its own gate
 * home and run folder, removed at the end.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const scratch = mkdtempSync(path.join(os.tmpdir(), "twinlock-adapter-bench-"));
process.env.TWINLOCK_HOME = path.join(scratch, "home");
const N = Number(process.env.BENCH_ADAPTER_CALLS ?? 500);

const { tool: aiTool } = await import("ai");
const { tool: agentsTool, RunContext } = await import("@openai/agents");
const { tool: lcTool } = await import("@langchain/core/tools");
const { z } = await import("zod");
const { gateTools } = await import("../src/adapters/ai-sdk.js");
const { gateFunctionTools } = await import("../src/adapters/openai-agents.js");
const { gateLangChainTools } = await import("../src/adapters/langgraph.js");
const { gateHooks } = await import("../src/adapters/claude-agent-sdk.js");
const { admitAndBind, consentedRun, WRITE_SCOPES } = await import("../src/test-support/adapter-runs.js");
const { removeGateRuns } = await import("../src/test-support/run-fixture.js");

/** The two timed alternately, call by call, so the machine's drift (2 shared cores) falls on both alike. */
async function timePair(bare: () => Promise<unknown>, gated: () => Promise<unknown>): Promise<[number[], number[]]> {
  for (let i = 0; i < 50; i++) {
    await bare();
    await gated();
  }
  const b: number[] = [];
  const g: number[] = [];
  const once = async (fn: () => Promise<unknown>, into: number[]) => {
    const t = process.hrtime.bigint();
    await fn();
    into.push(Number(process.hrtime.bigint() - t) / 1e6);
  };
  for (let i = 0; i < N; i++) {
    await once(bare, b);
    await once(gated, g);
  }
  return [b.sort((x, y) => x - y), g.sort((x, y) => x - y)];
}
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;

try {
  const { g, target } = await consentedRun();
  const { env } = await admitAndBind(g);
  const o = { home: g.home, env, cwd: g.dir, scopes: WRITE_SCOPES };
  const input = { path: target, content: "package cart\n" };
  const write = async ({ path: p, content }: { path: string; content: string }) => {
    writeFileSync(p, content);
    return "written";
  };
  const schema = z.object({ path: z.string(), content: z.string() });
  const ai = aiTool({ description: "w", inputSchema: schema, execute: write });
  const aiGated = gateTools({ write_file: ai }, o).write_file;
  const opts = { toolCallId: "c", messages: [] } as never;
  const ag = agentsTool({ name: "write_file", description: "w", parameters: schema, execute: write });
  const agGated = gateFunctionTools([ag], o)[0] as typeof ag;
  const ctx = new RunContext();
  const lc = lcTool(write, { name: "write_file", description: "w", schema });
  const lcGated = gateLangChainTools([lc], o)[0] as typeof lc;
  const hook = gateHooks({ home: g.home, env, cwd: g.dir }).PreToolUse[0]?.hooks[0];
  const hookInput = {
    hook_event_name: "PreToolUse",
    tool_name: "Write",
    tool_input: { file_path: target, content: "x" },
    tool_use_id: "t",
    session_id: "s",
    transcript_path: "",
    cwd: g.dir,
  } as never;
  const signal = new AbortController().signal;
  // Every gated call must be allowed, or the figures time a deny.
  const first = await aiGated?.execute?.(input, opts);
  if (first !== "written" || (await hook?.(hookInput, "t", { signal }))?.hookSpecificOutput)
    throw new Error("the bench's calls are not allowed");
  const rows: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
    ["twinlock/ai-sdk (execute)", async () => ai.execute?.(input, opts), async () => aiGated?.execute?.(input, opts)],
    [
      "twinlock/openai-agents (invoke)",
      async () => ag.invoke(ctx, JSON.stringify(input)),
      async () => agGated.invoke(ctx, JSON.stringify(input)),
    ],
    ["twinlock/langgraph (invoke)", async () => lc.invoke(input), async () => lcGated.invoke(input)],
    ["twinlock/claude-agent-sdk (PreToolUse callback, vs none)", async () => undefined, async () => hook?.(hookInput, "t", { signal })],
  ];
  console.log(`adapter | bare p50 ms | gated p50 ms | added p50 ms | added p99 ms | target ≤ 2 ms p50  (N=${N})`);
  for (const [name, bare, gated] of rows) {
    const [b, gd] = await timePair(bare, gated);
    const added50 = pct(gd, 50) - pct(b, 50);
    console.log(
      `${name} | ${pct(b, 50).toFixed(3)} | ${pct(gd, 50).toFixed(3)} | ${added50.toFixed(3)} | ${(pct(gd, 99) - pct(b, 99)).toFixed(3)} | ${added50 <= 2 ? "met" : "MISSED"}`,
    );
  }
} finally {
  removeGateRuns();
  rmSync(scratch, { recursive: true, force: true });
}
