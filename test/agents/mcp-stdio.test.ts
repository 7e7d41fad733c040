import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MCP_TOOLS } from "../../src/mcp/create-twinlock-mcp-server.js";
import {
  consent,
  EXECUTOR,
  freeze,
  frozenHash,
  makeGateRun,
  PLANNER,
  removeGateRuns,
  review,
  startRun,
} from "../../src/test-support/run-fixture.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

/** Words that would name a human decision or a trust-root change: no tool, argument, resource or prompt of the agent's server may carry one. */
const FORBIDDEN = /review_pair|approve|consent(?!ed)|decision|sign|key|pin|enrol|invite|lift|resolve|stop|token|trust|revoke|grant/i;

let clients: Client[] = [];

beforeAll(() => ensureBuilt(), 180_000);
afterEach(async () => {
  for (const c of clients) await c.close().catch(() => {});
  clients = [];
});
afterAll(() => removeGateRuns());

async function connect(runFile: string, home: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [DIST_BIN, "mcp", "--run", runFile, "--server", "http://localhost:7420"],
    env: { ...process.env, TWINLOCK_HOME: home, NODE_OPTIONS: "" } as Record<string, string>,
    stderr: "pipe",
  });
  const client = new Client({ name: "twinlock-test", version: "1" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

describe("twinlock mcp over stdio, through the MCP SDK's own client", () => {
  it("lists exactly the agent's tools, and none of them, their arguments, resources or prompts can make a human decision", async () => {
    const g = makeGateRun();
    await startRun(g);
    const client = await connect(g.runFile, g.home);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOLS].sort());
    for (const t of tools) {
      expect(t.name).not.toMatch(FORBIDDEN);
      for (const arg of Object.keys((t.inputSchema as { properties?: object }).properties ?? {}))
        expect(arg, `${t.name}.${arg}`).not.toMatch(FORBIDDEN);
    }
    const { resourceTemplates } = await client.listResourceTemplates();
    for (const r of resourceTemplates) expect(`${r.name} ${r.uriTemplate}`).not.toMatch(/approve|consent|sign|pin|enrol|lift/i);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["twinlock_executor"]);
  });

  it("freezes the handoff, reports status, reads the frozen plan resource, and checks admission check by check", async () => {
    const g = makeGateRun();
    await startRun(g);
    const client = await connect(g.runFile, g.home);
    const frozen = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: PLANNER, handoff_dir: "handoff" } });
    expect(frozen.isError, JSON.stringify(frozen.content)).toBeFalsy();
    const data = frozen.structuredContent as { hash: string; revision: number; review_url: string };
    expect(data.hash).toBe(frozenHash(g));
    expect(data.revision).toBe(1);
    expect(data.review_url).toMatch(/^http:\/\/localhost:7420\/runs\/run_[0-9a-f]{16}\/pairs\/MD-29\/revisions\/1$/);

    const status = await client.callTool({ name: "twinlock_status", arguments: { planner: PLANNER } });
    expect((status.structuredContent as { statuses: Array<{ state: string }> }).statuses[0]?.state).toBe("plan_review_pending");

    const ask = await client.callTool({ name: "twinlock_request_review", arguments: { planner: PLANNER } });
    expect((ask.content as Array<{ text: string }>)[0]?.text).toContain(data.hash);

    const runId = data.review_url.split("/")[4];
    const plan = await client.readResource({ uri: `twinlock://runs/${runId}/pairs/MD-29/revisions/1/plan` });
    expect((plan.contents[0] as { text: string }).text).toContain(data.hash);

    const check = await client.callTool({ name: "twinlock_check_admission", arguments: { executor: EXECUTOR } });
    const verdict = check.structuredContent as { would_admit: boolean; checks: Array<{ ok: boolean; name: string }> };
    expect(verdict.would_admit).toBe(false);
    expect(verdict.checks.some((c) => !c.ok)).toBe(true);
  });

  it("gives the consented executor's exact text as a prompt only after a person consented, and admission then passes its dry check", async () => {
    const g = makeGateRun();
    await startRun(g);
    const client = await connect(g.runFile, g.home);
    await expect(client.getPrompt({ name: "twinlock_executor", arguments: { executor: EXECUTOR } })).rejects.toThrow(
      /NO_CONSENT|no live consent/,
    );
    await freeze(g);
    await review(g, "approved", { handoffHash: frozenHash(g) });
    await consent(g, true, { handoffHash: frozenHash(g) });
    const prompt = await client.getPrompt({ name: "twinlock_executor", arguments: { executor: EXECUTOR } });
    expect(prompt.description).toContain(EXECUTOR);
    const text = prompt.messages.map((m) => (m.content as { text?: string }).text ?? "").join("");
    expect(text.length).toBeGreaterThan(100);
    const check = await client.callTool({ name: "twinlock_check_admission", arguments: { executor: EXECUTOR } });
    expect((check.structuredContent as { would_admit: boolean }).would_admit).toBe(true);
  });

  it("answers a refusal as a tool error with its stable code, and writes nothing", async () => {
    const g = makeGateRun();
    await startRun(g);
    const client = await connect(g.runFile, g.home);
    const r = await client.callTool({ name: "twinlock_request_review", arguments: { planner: PLANNER } });
    expect(r.isError).toBe(true);
    expect((r.content as Array<{ text: string }>)[0]?.text).toMatch(/^NOT_FROZEN: /);
    const bad = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: "MD-30", handoff_dir: "handoff" } });
    expect(bad.isError).toBe(true);
  });
});
