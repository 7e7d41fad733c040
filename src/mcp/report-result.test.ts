import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { admit } from "../gate/admit.js";
import type { Workflow } from "../run/run-schema.js";
import { createAgentToken, TOKEN_SCOPES } from "../server/agent-tokens.js";
import { receiptViews } from "../server/page-views.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import {
  apiOf,
  call,
  EXECUTOR,
  freezeApproveConsent,
  jsonOf,
  removeServerWorlds,
  reviewerFor,
  serverWorld,
} from "../test-support/gate-server-fixture.js";
import { driveTo, type GateRun, makeGateRun, PLANNER, removeGateRuns, storeOf, workflowOf } from "../test-support/run-fixture.js";
import { createTwinlockMcpServer } from "./create-twinlock-mcp-server.js";

afterAll(removeGateRuns);

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** An agent's MCP session on `g`'s run, over an in-memory transport. */
async function agentSession(g: GateRun): Promise<Client> {
  const run = await storeOf(g).read(g.runFile);
  const server = createTwinlockMcpServer({
    store: storeOf(g),
    ref: g.runFile,
    runId: run.state.run_id,
    planner: null,
    scopes: TOKEN_SCOPES,
    actor: "agent:executor-agent",
    reviewUrl: () => null,
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "twinlock-report-result-test", version: "1" });
  await Promise.all([server.connect(a), client.connect(b)]);
  clients.push(client);
  return client;
}

describe("twinlock_report_result is the agent's report, never a verified close", () => {
  it("offers the agent failed, rolled_back and abandoned only, and says verifying is a person's call", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const { tools } = await (await agentSession(g)).listTools();
    const tool = tools.find((t) => t.name === "twinlock_report_result");
    const result = (tool?.inputSchema.properties as Record<string, { enum?: string[] }> | undefined)?.result;
    expect(result?.enum).toEqual(["failed", "rolled_back", "abandoned"]);
    expect(tool?.description).toMatch(/never as verified: verifying the work is a person's call/);
    expect(tool?.description).toContain("twinlock close RUN ID --result verified --git-range BASE...HEAD");
  });

  it("refuses the agent's verified (attack: the agent closes its own work as verified) and records nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const before = readFileSync(g.runFile);
    const client = await agentSession(g);
    let answer: { isError?: unknown } | undefined;
    let thrown: unknown;
    try {
      answer = (await client.callTool({
        name: "twinlock_report_result",
        arguments: { planner: PLANNER, result: "verified", residual: "none" },
      })) as typeof answer;
    } catch (e) {
      thrown = e;
    }
    // Either the schema refuses it as invalid params, or the tool answers with an error: never a close.
    if (thrown === undefined) expect(answer?.isError).toBe(true);
    else expect(String(thrown)).toMatch(/-32602|Invalid/);
    expect(readFileSync(g.runFile).equals(before)).toBe(true);
    expect(workflowOf(g).state).toBe("executing");
  });

  it("records the agent's failed as a close made by the agent, named in the result", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const r = await (await agentSession(g)).callTool({
      name: "twinlock_report_result",
      arguments: { planner: PLANNER, result: "failed", residual: "V2 still races" },
    });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect((r.content as Array<{ text: string }>)[0]?.text).toBe(
      "recorded your report: MD-29 closed failed by agent:executor-agent; state closed",
    );
    expect(workflowOf(g).result).toMatchObject({ outcome: "failed", residual: "V2 still races", by: "agent:executor-agent", report: true });
  });
});

describe("the gate server's result route", () => {
  afterAll(removeServerWorlds);

  it("refuses an agent token's verified (attack: the agent closes its own work over the API), records nothing, and takes its failed as its report, shown as one", async () => {
    const w = await serverWorld();
    await freezeApproveConsent(w, await reviewerFor(w, "alice"));
    const admitted = await admit({ store: w.store, run: w.runFile, executor: EXECUTOR, actor: "executor-agent" });
    expect(admitted.admitted).toBe(true);
    const { token } = await createAgentToken(w.home, { agent: "executor-agent", runId: w.runId });
    const before = readFileSync(w.runFile);
    const refused = await jsonOf(await call(w, apiOf(w).result, { token, json: { result: "verified", residual: "none" } }));
    expect(refused.status).toBe(409);
    expect(String(refused.body.message)).toContain("verified is a person's call on the executed change, never the agent's report");
    expect(readFileSync(w.runFile).equals(before)).toBe(true);
    const failed = await jsonOf(await call(w, apiOf(w).result, { token, json: { result: "failed", residual: "V2 races" } }));
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    const state = (await w.store.read(w.runFile)).state;
    const wf = state.workflows[PLANNER] as Workflow;
    expect(wf.result).toMatchObject({ outcome: "failed", by: "agent:executor-agent", report: true });
    expect(wf.result?.receipt).toBeUndefined();
    // The page's timeline shows it as the agent's report: no receipt, nobody's verification.
    expect(receiptViews(state, wf, { reviewers: [] } as unknown as SuiteConfig).filter((v) => v.kind === "agent_report")).toEqual([
      expect.objectContaining({
        who: "agent:executor-agent",
        decision: "reported failed (the agent's report, not a person's call)",
        signature: "unsigned",
        verified: null,
      }),
    ]);
  });
});
