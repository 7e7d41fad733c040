/**
 * What a request may reach and what it costs, as the agent would probe it:
 * who asks is checked before any run is read, a request reads its run
 * once, a planner ID that names a built-in member of an object is just an
 * unknown pair, and a token is confined to its own run's handoff even when
 * another run sits inside its run's folder.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { initRun } from "../gate/init-run.js";
import type { RunStore } from "../store/run-store.js";
import {
  apiOf,
  call,
  EXECUTOR,
  PLANNER,
  type Reviewer,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
  TEST_HOST,
  TEST_ORIGIN,
} from "../test-support/gate-server-fixture.js";
import { AGENT_SCOPES, createAgentToken } from "./agent-tokens.js";
import { createGateApp } from "./create-gate-app.js";

let w: ServerWorld;
let counted: ServerWorld;
let reads: string[];
let token: string;
let reviewer: Reviewer;

/** The world's store, counting every verified read. */
function countingStore(store: RunStore): RunStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === "read")
        return (ref: string) => {
          reads.push(ref);
          return target.read(ref);
        };
      return Reflect.get(target, key, receiver);
    },
  });
}

beforeAll(async () => {
  w = await serverWorld();
  reads = [];
  const { app } = createGateApp({
    store: countingStore(w.store),
    origin: TEST_ORIGIN,
    allowedHosts: [TEST_HOST],
    tls: false,
    insecureHttp: false,
  });
  counted = { ...w, app };
  token = (await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId, scopes: AGENT_SCOPES })).token;
  const frozen = await call(w, apiOf(w).freeze, { json: { handoff_dir: w.handoff }, token });
  expect(frozen.status).toBe(200);
  reviewer = await reviewerFor(counted, "alice");
});
afterAll(removeServerWorlds);

async function readsOf(request: () => Promise<Response>): Promise<{ status: number; reads: number }> {
  reads = [];
  const r = await request();
  await r.text();
  return { status: r.status, reads: reads.length };
}

describe("who asks is checked before any run is read", () => {
  it("gives an anonymous admission check the same answer for a known run and an unknown one, reading neither, naming no path", async () => {
    const unknown = "run_0123456789abcdef";
    const answers: string[] = [];
    for (const runId of [w.runId, unknown]) {
      reads = [];
      const r = await call(counted, `/api/runs/${runId}/executors/${EXECUTOR}/admission-check`, { json: {} });
      const body = (await r.json()) as { code: string; message: string };
      expect(reads).toEqual([]);
      expect(r.status).toBe(401);
      expect(body.message).not.toContain(w.dir);
      answers.push(JSON.stringify(body));
    }
    expect(answers[0]).toBe(answers[1]);
  });

  it("refuses another run's token before reading the run it names", async () => {
    const other = (await createAgentToken(w.home, { agent: "other", runId: "run_0123456789abcdef" })).token;
    const r = await readsOf(() => call(counted, apiOf(w).admission, { json: {}, token: other }));
    expect(r).toEqual({ status: 403, reads: 0 });
  });

  it("opens no MCP request for a token without the scope by reading the run", async () => {
    const statusOnly = (await createAgentToken(w.home, { agent: "status-only", runId: w.runId, scopes: ["result"] })).token;
    const r = await readsOf(() =>
      call(counted, "/mcp", {
        token: statusOnly,
        headers: { accept: "application/json, text/event-stream" },
        json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "twinlock_status", arguments: {} } },
      }),
    );
    expect(r).toEqual({ status: 200, reads: 0 });
  });
});

describe("a request reads its run once", () => {
  it("for the plan, the status, the admission check and the MCP status tool", async () => {
    expect(await readsOf(() => call(counted, apiOf(w).plan, { token }))).toEqual({ status: 200, reads: 1 });
    expect(await readsOf(() => call(counted, apiOf(w).pair, { token }))).toEqual({ status: 200, reads: 1 });
    expect(await readsOf(() => call(counted, apiOf(w).admission, { token, json: {} }))).toEqual({ status: 200, reads: 1 });
    expect(
      await readsOf(() =>
        call(counted, "/mcp", {
          token,
          headers: { accept: "application/json, text/event-stream" },
          json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "twinlock_status", arguments: {} } },
        }),
      ),
    ).toEqual({ status: 200, reads: 1 });
    expect(
      await readsOf(() =>
        call(counted, `/runs/${w.runId}/pairs/${PLANNER}/revisions/1`, { cookie: reviewer.cookie, headers: { accept: "text/html" } }),
      ),
    ).toEqual({ status: 200, reads: 1 });
  });
});

describe("IDs that name built-in members of an object", () => {
  const NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype", "__defineGetter__", "isPrototypeOf"];
  const ROUTES: Array<{ method: string; path: string }> = [
    { method: "GET", path: "/api/runs/:runId" },
    { method: "GET", path: "/api/runs/:runId/pairs/:planner" },
    { method: "GET", path: "/api/runs/:runId/pairs/:planner/plan" },
    { method: "POST", path: "/api/runs/:runId/pairs/:planner/freeze" },
    { method: "POST", path: "/api/runs/:runId/executors/:executor/admission-check" },
    { method: "POST", path: "/api/runs/:runId/pairs/:planner/result" },
    { method: "POST", path: "/api/runs/:runId/pairs/:planner/review/challenge" },
    { method: "POST", path: "/api/runs/:runId/pairs/:planner/consent/challenge" },
    { method: "POST", path: "/api/runs/:runId/pairs/:planner/apply-approval/challenge" },
    { method: "POST", path: "/api/runs/:runId/pairs/:planner/verified-close/challenge" },
    { method: "GET", path: "/runs/:runId" },
    { method: "GET", path: "/runs/:runId/pairs/:planner" },
    { method: "GET", path: "/runs/:runId/pairs/:planner/revisions/:revision" },
  ];

  it("are an unknown pair or run on every route, for an agent and a reviewer, never a server error", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...NAMES),
        fc.constantFrom(...ROUTES),
        fc.constantFrom("planner", "executor", "runId", "revision"),
        fc.boolean(),
        async (name, route, slot, asAgent) => {
          const url = route.path
            .replace(":runId", slot === "runId" ? name : w.runId)
            .replace(":planner", slot === "planner" ? name : PLANNER)
            .replace(":executor", slot === "executor" ? name : EXECUTOR)
            .replace(":revision", slot === "revision" ? name : "1");
          const who = asAgent ? { token } : { cookie: reviewer.cookie, csrf: reviewer.csrf };
          const r = await call(counted, url, {
            method: route.method,
            ...who,
            ...(route.method === "POST" ? { json: { handoff_dir: w.handoff, result: "verified", decision: "approved" } } : {}),
            headers: { accept: route.path.startsWith("/api/") ? "application/json" : "text/html" },
          });
          const text = await r.text();
          expect(r.status, `${route.method} ${url}: ${text.slice(0, 200)}`).toBeLessThan(500);
          if (url.includes(name) && r.status !== 403) expect([400, 404, 409], `${route.method} ${url}`).toContain(r.status);
        },
      ),
      { numRuns: 120 },
    );
  });
});

describe("a run nested in another run's folder", () => {
  it("is not the outer run's token's to freeze or read, whichever folder of it the token names", async () => {
    const inner = path.join(w.dir, "inner");
    mkdirSync(inner);
    const innerHandoff = path.join(inner, "handoff");
    writeDemoHandoff(innerHandoff, demoHandoffRecords());
    await initRun({
      run: path.join(inner, "run.json"),
      store: w.store,
      suiteRoot: w.suite,
      planners: [PLANNER],
      mode: "APPLY_SAFE",
      environment: "staging",
      actions: "all",
      budget: null,
      actor: "inner-agent",
    });
    for (const dir of [innerHandoff, inner, "inner/handoff", w.dir, "."]) {
      const r = await call(w, apiOf(w).freeze, { token, json: { handoff_dir: dir } });
      const body = (await r.json()) as { message: string };
      expect(r.status, dir).toBe(400);
      expect(body.message).toMatch(/another run's folder/);
    }
    const own = await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff, unchanged_because: "same plan" } });
    expect(own.status, await own.clone().text()).toBeLessThan(500);
  });
});

describe("a run file swapped under the token's run", () => {
  it("is refused by the MCP tools as not this run, as the API refuses it", async () => {
    const a = await serverWorld();
    const t = (await createAgentToken(a.home, { agent: "claude", runId: a.runId, scopes: AGENT_SCOPES })).token;
    // The agent can write its run file: it copies another run's file (valid under that run's own checkpoint) over it.
    const other = path.join(a.dir, "other");
    mkdirSync(other);
    await initRun({
      run: path.join(other, "run.json"),
      store: a.store,
      suiteRoot: a.suite,
      planners: [PLANNER],
      mode: "APPLY_SAFE",
      environment: "staging",
      actions: "all",
      budget: null,
      actor: "other-agent",
    });
    copyFileSync(path.join(other, "run.json"), a.runFile);
    const r = await call(a, "/mcp", {
      token: t,
      headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "twinlock_status", arguments: {} } },
    });
    const body = (await r.json()) as { result: { isError?: boolean; structuredContent: { code?: string } } };
    expect(body.result.isError).toBe(true);
    expect(body.result.structuredContent.code).toBe("INTEGRITY");
  });
});

describe("form fields named after built-in members of an object", () => {
  it("are refused as unknown fields, never a server error, on every decision's challenge", async () => {
    for (const op of ["review", "consent", "apply-approval", "verified-close"]) {
      for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
        const r = await call(counted, `/api/runs/${w.runId}/pairs/${PLANNER}/${op}/challenge`, {
          form: { [name]: "x", handoff_hash: "0".repeat(64), decision: "approved", csrf: reviewer.csrf },
          cookie: reviewer.cookie,
        });
        expect(r.status, `${op} ${name}: ${await r.clone().text()}`).toBeLessThan(500);
      }
    }
  });
});
