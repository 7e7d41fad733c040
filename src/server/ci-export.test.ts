import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admit } from "../gate/admit.js";
import {
  apiOf,
  call,
  EXECUTOR,
  freezeApproveConsent,
  jsonOf,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
} from "../test-support/gate-server-fixture.js";
import { ensureGateKey } from "../trust/gate-key.js";
import { verifyGateStatement } from "../trust/gate-statement.js";
import { createAgentToken } from "./agent-tokens.js";
import { apiPaths } from "./api-paths.js";

let w: ServerWorld;
beforeAll(async () => {
  w = await serverWorld();
  await freezeApproveConsent(w, await reviewerFor(w, "alice"));
  const admitted = await admit({ store: w.store, run: w.runFile, executor: EXECUTOR, actor: "executor-agent" });
  expect(admitted.admitted).toBe(true);
}, 60_000);
afterAll(removeServerWorlds);

describe("CI's read-only token and the gate's signed export", () => {
  it("gives a CI token for every run the run's export, its head signed by the gate as an export", async () => {
    const { token } = await createAgentToken(w.home, { agent: "ci", runId: "*", scopes: ["export"] });
    const r = await call(w, apiPaths.export(w.runId), { token });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const exported = JSON.parse(await r.text());
    const held = JSON.parse(readFileSync(w.runFile, "utf8"));
    expect(exported.head).toBe(held.head);
    expect(exported.gate_signature.kind).toBe("export");
    expect(exported.gate_signature.gate_key).toBe((await ensureGateKey(w.home)).publicKey);
    expect(verifyGateStatement(exported.gate_signature, "export", w.runId, exported.revision, exported.head)).toBe(true);
  });

  it("lets a CI token read nothing else: not a run's state, its plan, a freeze, a result, the run list's runs or MCP", async () => {
    const { token } = await createAgentToken(w.home, { agent: "ci", runId: "*", scopes: ["export"] });
    for (const [url, c] of [
      [apiOf(w).run, {}],
      [apiOf(w).plan, {}],
      [apiOf(w).pair, {}],
      [apiOf(w).freeze, { json: { handoff_dir: w.handoff } }],
      [apiOf(w).result, { json: { result: "verified" } }],
      [apiOf(w).admission, { json: {} }],
    ] as const) {
      const r = await jsonOf(await call(w, url, { token, ...c }));
      expect(r.status, url).toBe(403);
      expect(r.body.code, url).toBe("TOKEN_SCOPE");
    }
    expect((await jsonOf(await call(w, "/api/runs", { token }))).body.runs).toEqual([]);
    const mcp = await call(w, "/mcp", {
      token,
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(mcp.status).toBe(404);
  });

  it("refuses the export to an agent's token, to anonymous callers, and a CI token made for another run", async () => {
    const agent = await createAgentToken(w.home, { agent: "claude", runId: w.runId });
    expect((await jsonOf(await call(w, apiPaths.export(w.runId), { token: agent.token }))).body.code).toBe("TOKEN_SCOPE");
    expect((await call(w, apiPaths.export(w.runId))).status).toBe(401);
    const other = await createAgentToken(w.home, { agent: "ci", runId: "run_0123456789abcdef", scopes: ["export"] });
    expect((await jsonOf(await call(w, apiPaths.export(w.runId), { token: other.token }))).body.code).toBe("TOKEN_RUN");
  });

  it("never makes the export scope part of an agent's token, nor a token for every run that is not CI's", async () => {
    await expect(createAgentToken(w.home, { agent: "claude", runId: w.runId, scopes: ["status", "export"] })).rejects.toThrow(
      "the export scope is CI's and goes alone",
    );
    await expect(createAgentToken(w.home, { agent: "claude", runId: "*" })).rejects.toThrow("only a CI token");
    await expect(createAgentToken(w.home, { agent: "ci", runId: "*", scopes: ["export"], expiresInDays: 400 })).rejects.toThrow(
      "between 0 and 366",
    );
    const plain = await createAgentToken(w.home, { agent: "claude", runId: w.runId });
    expect(plain.record.scopes).not.toContain("export");
  });
});
