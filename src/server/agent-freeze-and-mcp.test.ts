import { renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { MCP_TOOLS } from "../mcp/create-twinlock-mcp-server.js";
import {
  call,
  jsonOf,
  PLANNER,
  removeServerWorlds,
  type ServerWorld,
  serverTempDir,
  serverWorld,
  TEST_ORIGIN,
} from "../test-support/gate-server-fixture.js";
import { mcpClientFor } from "../test-support/mcp-client.js";
import { createAgentToken } from "./agent-tokens.js";

afterEach(() => removeServerWorlds());

const freezeUrl = (w: ServerWorld) => `/api/runs/${w.runId}/pairs/${PLANNER}/freeze`;

describe("agents freezing through the server on a suite that requires signed receipts", () => {
  it("refuses an agent token's freeze without a key, and signs it with the planner key the home keeps for a token made with --freeze-key", async () => {
    const w = await serverWorld({ signing: true });
    const plain = await createAgentToken(w.home, { agent: "planner", runId: w.runId });
    const refused = await jsonOf(await call(w, freezeUrl(w), { token: plain.token, json: { handoff_dir: w.handoff } }));
    expect(refused.status).toBe(409);
    expect(String(refused.body.message)).toMatch(/unsigned|sign/i);

    const keyed = await createAgentToken(w.home, { agent: "planner", runId: w.runId, freezeKey: w.plannerKey });
    expect(keyed.record.freeze_key).toMatch(/^ed25519:/);
    const frozen = await jsonOf(await call(w, freezeUrl(w), { token: keyed.token, json: { handoff_dir: w.handoff } }));
    expect(frozen.status, JSON.stringify(frozen.body)).toBe(200);
    expect(frozen.body.revision).toBe(1);
    const wf = (await w.store.read(w.runFile)).state.workflows[PLANNER];
    expect(wf?.handoff?.receipt.signature?.signer).toBe("planner-agent");
  });

  it("takes a relative handoff folder from the run file's folder, never from the server's working folder", async () => {
    const w = await serverWorld();
    const t = await createAgentToken(w.home, { agent: "planner", runId: w.runId });
    const frozen = await jsonOf(await call(w, freezeUrl(w), { token: t.token, json: { handoff_dir: "handoff" } }));
    expect(frozen.status).toBe(200);
  });
});

describe("an agent's token freezes only a folder beside its own run (attack: freeze another run's or the server's files to read them)", () => {
  it("refuses another run's handoff folder and a folder outside the run's, over the API and over MCP, recording nothing", async () => {
    const a = await serverWorld();
    const b = await serverWorld();
    writeFileSync(path.join(b.handoff, "report.md"), "# SECRET-OF-RUN-B\n");
    const t = await createAgentToken(a.home, { agent: "claude", runId: a.runId });
    for (const dir of [b.handoff, "/root", "/etc", "../"]) {
      const r = await jsonOf(await call(a, freezeUrl(a), { token: t.token, json: { handoff_dir: dir } }));
      expect(r.status, dir).toBe(400);
      expect(String(r.body.message), dir).toMatch(/outside the run's folder|does not exist/);
    }
    const client = await mcpClientFor(a, t.token);
    const viaMcp = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: PLANNER, handoff_dir: b.handoff } });
    expect(viaMcp.isError).toBe(true);
    const probe = await client.callTool({ name: "twinlock_readiness", arguments: { planner: PLANNER, handoff_dir: "/root" } });
    expect(probe.isError).toBe(true);
    await client.close();
    expect((await a.store.read(a.runFile)).state.workflows[PLANNER]?.handoff).toBeNull();
  });
});

describe("every freeze re-checks the folder where the copy is read from (attack: a link swapped in after the first freeze)", () => {
  it("refuses a later freeze, over the API and over MCP, named or not, once a folder on the way leads out of the run's folder", async () => {
    const w = await serverWorld();
    const inner = path.join(w.dir, "x", "h");
    writeDemoHandoff(inner, demoHandoffRecords());
    const t = await createAgentToken(w.home, { agent: "claude", runId: w.runId });
    expect((await call(w, freezeUrl(w), { token: t.token, json: { handoff_dir: inner } })).status).toBe(200);
    const outside = path.join(serverTempDir("twinlock-outside-"), "srv-other");
    writeDemoHandoff(path.join(outside, "h"), demoHandoffRecords());
    writeFileSync(path.join(outside, "h", "notes.md"), "SECRET-OUTSIDE-RUNDIR\n");
    writeFileSync(path.join(outside, "h", "evidence_index.json"), '{"password":"hunter2"}\n');
    renameSync(path.join(w.dir, "x"), path.join(w.dir, "x.old"));
    symlinkSync(outside, path.join(w.dir, "x"));
    for (const body of [{}, { handoff_dir: inner }]) {
      const r = await jsonOf(await call(w, freezeUrl(w), { token: t.token, json: body }));
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(String(r.body.message)).toMatch(/outside the run's folder/);
      expect(JSON.stringify(r.body)).not.toMatch(/SECRET|password|hunter2/);
    }
    const client = await mcpClientFor(w, t.token);
    for (const name of ["twinlock_submit_handoff", "twinlock_readiness"]) {
      const r = await client.callTool({ name, arguments: { planner: PLANNER } });
      expect(r.isError, name).toBe(true);
      expect(JSON.stringify(r.content)).not.toMatch(/SECRET|password|hunter2/);
    }
    await client.close();
    expect((await w.store.read(w.runFile)).state.workflows[PLANNER]?.revision).toBe(1);
    const plan = await call(w, `${freezeUrl(w).replace(/\/freeze$/, "")}/plan`, { token: t.token });
    expect(await plan.text()).not.toContain("SECRET-OUTSIDE-RUNDIR");
  });
});

describe("the MCP endpoint of the gate server", () => {
  it("signs an MCP freeze with the token's freeze key on a suite that requires signed receipts", async () => {
    const w = await serverWorld({ signing: true });
    const t = await createAgentToken(w.home, { agent: "claude", runId: w.runId, freezeKey: w.plannerKey });
    const client = await mcpClientFor(w, t.token);
    const r = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: PLANNER, handoff_dir: w.handoff } });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect((await w.store.read(w.runFile)).state.workflows[PLANNER]?.handoff?.receipt.signature?.signer).toBe("planner-agent");
    await client.close();
  });

  it("serves the agent's tools, limited to its token's run, and freezes through them", async () => {
    const w = await serverWorld();
    const t = await createAgentToken(w.home, { agent: "claude", runId: w.runId });
    const client = await mcpClientFor(w, t.token);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([...MCP_TOOLS].sort());
    const r = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: PLANNER, handoff_dir: w.handoff } });
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { review_url: string }).review_url).toBe(`${TEST_ORIGIN}/runs/${w.runId}/pairs/${PLANNER}/revisions/1`);
    await client.close();
  });

  it("answers only the token's scopes: a status-only token cannot freeze", async () => {
    const w = await serverWorld();
    const t = await createAgentToken(w.home, { agent: "claude", runId: w.runId, scopes: ["status"] });
    const client = await mcpClientFor(w, t.token);
    const r = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: PLANNER, handoff_dir: w.handoff } });
    expect(r.isError).toBe(true);
    expect((r.content as Array<{ text: string }>)[0]?.text).toMatch(/^TOKEN_SCOPE/);
    await client.close();
  });

  it("refuses a request without an agent token", async () => {
    const w = await serverWorld();
    await expect(mcpClientFor(w, undefined)).rejects.toThrow();
    const r = await call(w, "/mcp", { json: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    expect(r.status).toBe(401);
  });
});

describe("a token for one pair sees only that pair", () => {
  it("leaves the run's other pairs out of the run's state", async () => {
    const w = await serverWorld();
    const t = await createAgentToken(w.home, { agent: "claude", runId: w.runId, planner: "MD-33" });
    const r = await jsonOf(await call(w, `/api/runs/${w.runId}`, { token: t.token }));
    expect(r.status).toBe(200);
    expect(Object.keys((r.body.state as { workflows: object }).workflows)).toEqual([]);
  });
});
