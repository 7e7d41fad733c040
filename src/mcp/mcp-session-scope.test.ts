import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { sessionMcpCommand } from "../cli/session-mcp-relay.js";
import { driveTo, EXECUTOR, type GateRun, makeGateRun, PLANNER, removeGateRuns, storeOf, workflowOf } from "../test-support/run-fixture.js";
import { createTwinlockMcpServer } from "./create-twinlock-mcp-server.js";
import { mcpSessionScope } from "./mcp-session-scope.js";

afterAll(removeGateRuns);

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** The relay's MCP session as `twinlock mcp` serves it from the arguments exec gives it, over an in-memory transport. */
async function relayedSession(g: GateRun, args: readonly string[]): Promise<Client> {
  const value = (flag: string) => {
    const i = args.indexOf(flag);
    return i < 0 ? undefined : args[i + 1];
  };
  const run = await storeOf(g).read(g.runFile);
  const { planner, scopes } = mcpSessionScope(run.state, { planner: value("--planner") ?? null, executor: value("--executor") });
  const server = createTwinlockMcpServer({
    store: storeOf(g),
    ref: g.runFile,
    runId: run.state.run_id,
    planner,
    scopes,
    actor: "mcp-agent",
    reviewUrl: () => null,
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "twinlock-session-scope-test", version: "1" });
  await Promise.all([server.connect(a), client.connect(b)]);
  clients.push(client);
  return client;
}

const textOf = (r: unknown) => ((r as { content?: unknown }).content as Array<{ text: string }>)[0]?.text ?? "";

describe("exec's relay serves the executor's own pair, as an executor", () => {
  const execArgs = sessionMcpCommand("run.json", "/home", { planner: PLANNER, executor: EXECUTOR });

  it("refuses a freeze of another pair and of its own, and a close of another pair, each with the reason (attack: the executor's agent freezes or closes other pairs of its run)", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const client = await relayedSession(g, execArgs);
    const otherFreeze = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: "MD-41", handoff_dir: "handoff" } });
    expect(otherFreeze.isError).toBe(true);
    expect(textOf(otherFreeze)).toMatch(/^TOKEN_SCOPE: this session does not have the freeze scope/);
    const ownFreeze = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: PLANNER, handoff_dir: "handoff" } });
    expect(textOf(ownFreeze)).toMatch(/^TOKEN_SCOPE: this session does not have the freeze scope/);
    const otherClose = await client.callTool({
      name: "twinlock_report_result",
      arguments: { planner: "MD-41", result: "abandoned", residual: "all" },
    });
    expect(otherClose.isError).toBe(true);
    expect(textOf(otherClose)).toBe(
      "TOKEN_PAIR: this session is for MD-29, not MD-41; a person who keeps the gate home can grant a token for that pair",
    );
    expect(workflowOf(g).state).toBe("executing");
  });

  it("takes the executor's own report of its result", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const client = await relayedSession(g, execArgs);
    const r = await client.callTool({
      name: "twinlock_report_result",
      arguments: { planner: PLANNER, result: "failed", residual: "V2 races" },
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(workflowOf(g).result).toMatchObject({ outcome: "failed", report: true, by: "mcp-agent" });
  });

  it("is refused for an executor that is not its pair's", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const { state } = await storeOf(g).read(g.runFile);
    expect(() => mcpSessionScope(state, { planner: PLANNER, executor: "MD-41" })).toThrow(/MD-41 is not the executor of MD-29's pair/);
    expect(() => mcpSessionScope(state, { planner: null, executor: EXECUTOR })).toThrow(/needs --planner/);
  });
});
