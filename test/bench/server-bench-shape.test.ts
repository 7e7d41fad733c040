import { mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admissionCheckRequest, loadGateLibrary, prepareGateRuns, realisticPairs, statusRequest } from "../../bench/lib/gate-runs.mjs";
import { generateRealSuite } from "../../bench/lib/generate-real-suite.mjs";
import { runLoad } from "../../bench/lib/load-generator.mjs";
import { procMemory, startServerProcess } from "../../bench/lib/server-process.mjs";
import { makeSignedSuite } from "../../bench/lib/signed-suite.mjs";
import { makeTempDir, removeTempDirs } from "../../src/test-support/temp-suite.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";

/**
 * The server section of `npm run bench` claims its runs are shaped like real
 * use and that every admission check it times runs every check. These tests
 * hold its helpers to that: the runs are in `dry_run_ready` with signed
 * receipts, the admission check through the real server answers with the
 * same full list of checks a run that fails gets (no fast path), all passing,
 * and records nothing; the load generator is bounded and counts what it sends.
 */
type Server = Awaited<ReturnType<typeof startServerProcess>>;
type Lib = Awaited<ReturnType<typeof loadGateLibrary>>;
let server: Server | undefined;
let lib: Lib;
let signed: Awaited<ReturnType<typeof makeSignedSuite>>;
let runs: Awaited<ReturnType<typeof prepareGateRuns>>;
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir("twinlock-server-bench-");
  const suite = generateRealSuite(path.join(dir, "repo"), 257);
  signed = await makeSignedSuite(REPO_ROOT, suite.dir, path.join(dir, "signed"), DIST_BIN);
  lib = await loadGateLibrary(REPO_ROOT);
  runs = await prepareGateRuns({ lib, signed, dir: path.join(dir, "runs"), from: 0, to: 3, concurrency: 2 });
  server = await startServerProcess([DIST_BIN, "serve", "--listen", "127.0.0.1:0", "--quiet"], {
    env: { ...process.env, TWINLOCK_HOME: signed.home },
  });
}, 240_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

async function call(req: { method: string; path: string; headers: Record<string, string>; body?: string }) {
  const res = await fetch(`${server?.url}${req.path}`, {
    method: req.method,
    headers: { ...req.headers, ...(req.body !== undefined ? { "content-type": "application/json" } : {}) },
    body: req.body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("the server bench's runs and requests", () => {
  it("makes each run on its own pair of the realistic suite, signed, in dry_run_ready, with its own token", async () => {
    const pairs = realisticPairs(257);
    const store = lib.folderRunStore(lib.openGateHome(signed.home));
    expect(new Set(runs.map((r) => r.token)).size).toBe(runs.length);
    for (const [i, run] of runs.entries()) {
      expect({ planner: run.planner, executor: run.executor }).toEqual(pairs[i]);
      const loaded = await store.read(run.runFile);
      const wf = loaded.state.workflows[run.planner];
      expect(wf?.state).toBe("dry_run_ready");
      expect(wf?.handoff?.hash).toBe(run.handoffHash);
      expect(wf?.reviews.map((r) => [r.decision, Boolean(r.signature)])).toEqual([["approved", true]]);
      expect(wf?.consents.map((c) => [c.decision, c.executor, Boolean(c.signature)])).toEqual([["approved", run.executor, true]]);
      const { json } = await call(statusRequest(run));
      expect((json.status as { state: string }).state).toBe("dry_run_ready");
    }
  });

  it("times an admission check that runs every check, passes them all, and records nothing", async () => {
    const run = runs[0] as (typeof runs)[number];
    const before = (await call(statusRequest(run))).json.status as { revision: number };
    const ready = await call(admissionCheckRequest(run));
    expect(ready.status).toBe(200);
    expect(ready.json.would_admit).toBe(true);
    const checks = ready.json.checks as { id: string; ok: boolean }[];
    expect(checks.every((c) => c.ok)).toBe(true);

    // A run that only began (nothing frozen, reviewed or consented) fails admission: its answer lists the checks
    // admission has. The bench's answer must list exactly those, so no check was skipped on the way to "yes".
    const pair = realisticPairs(257)[0] as { planner: string; executor: string };
    mkdirSync(path.join(dir, "begun"));
    const runFile = path.join(dir, "begun", "run.json");
    const home = lib.openGateHome(signed.home);
    const begun = await lib.initRun({
      store: lib.folderRunStore(home),
      run: runFile,
      suiteRoot: signed.suite,
      planners: [pair.planner],
      mode: "DRAFT_ONLY",
      environment: "staging",
      actions: "all",
      budget: 10,
      actor: "test",
    });
    const { token } = await lib.createAgentToken(home, { agent: "test-agent", runId: begun.state.run_id, planner: pair.planner });
    const refused = await call(admissionCheckRequest({ runId: begun.state.run_id, executor: pair.executor, token }));
    expect(refused.json.would_admit).toBe(false);
    const all = (refused.json.checks as { id: string; ok: boolean }[]).map((c) => c.id);
    expect(all.length).toBeGreaterThan(15);
    expect(checks.map((c) => c.id)).toEqual(all);

    const after = (await call(statusRequest(run))).json.status as { revision: number; state: string };
    expect(after.revision).toBe(before.revision);
    expect(after.state).toBe("dry_run_ready");
  });
});

describe("the bench's load generator and server processes", () => {
  it("sends exactly the requests asked for, records each latency, and counts refusals as errors", async () => {
    const url = server?.url as string;
    const run = runs[1] as (typeof runs)[number];
    const ok = await runLoad({ url, concurrency: 4, requests: 20, maxSeconds: 30, request: () => statusRequest(run) });
    expect(ok).toMatchObject({ count: 20, errors: 0, concurrency: 4 });
    expect(ok.p50).toBeGreaterThan(0);
    expect(ok.p99).toBeGreaterThanOrEqual(ok.p50);
    expect(ok.max).toBeGreaterThanOrEqual(ok.p99);
    const wrongToken = await runLoad({
      url,
      requests: 3,
      request: () => statusRequest({ ...run, token: (runs[2] as (typeof runs)[number]).token }),
    });
    expect(wrongToken.errors).toBe(3);
    expect(wrongToken.firstError).toMatch(/^HTTP 403/);
  });

  it("stops at its time bound, and never targets anything but loopback", async () => {
    const url = server?.url as string;
    const run = runs[1] as (typeof runs)[number];
    const bounded = await runLoad({ url, requests: 1_000_000, maxSeconds: 0.3, request: () => statusRequest(run) });
    expect(bounded.count).toBeLessThan(1_000_000);
    expect(bounded.seconds).toBeLessThan(5);
    await expect(runLoad({ url: "http://192.0.2.1:80", request: () => ({ method: "GET", path: "/" }) })).rejects.toThrow(/loopback/);
  });

  it("reads a server's memory from /proc and leaves no server process behind", async () => {
    const floor = await startServerProcess([path.join(REPO_ROOT, "bench", "lib", "floor-server.mjs"), "http"]);
    const m = procMemory(floor.pid);
    expect(m.rssKiB).toBeGreaterThan(1024);
    expect(m.hwmKiB).toBeGreaterThanOrEqual(m.rssKiB);
    await floor.stop();
    expect(() => process.kill(floor.pid as number, 0)).toThrow();
  });
});
