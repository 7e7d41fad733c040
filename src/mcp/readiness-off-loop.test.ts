import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentToken } from "../server/agent-tokens.js";
import { createGateApp } from "../server/create-gate-app.js";
import type { RunStore } from "../store/run-store.js";
import { countTurns } from "../test-support/count-turns.js";
import { call, PLANNER, removeServerWorlds, serverWorld, TEST_HOST, TEST_ORIGIN } from "../test-support/gate-server-fixture.js";

afterEach(() => removeServerWorlds());

/** The attack as measured (20,000 files) with TWINLOCK_SOAK=1; 4,000 by default, which a synchronous copy holds the loop through all the same. */
const FILES = process.env.TWINLOCK_SOAK === "1" ? 20_000 : 4_000;

describe(`MCP readiness of a handoff of ${FILES.toLocaleString("en")} small files`, () => {
  it("lets /healthz answer while it runs, and makes no copy of the handoff", async () => {
    const w = await serverWorld();
    const bulk = path.join(w.handoff, "bulk");
    mkdirSync(bulk);
    for (let i = 0; i < FILES; i++) writeFileSync(path.join(bulk, `f${String(i).padStart(5, "0")}.bin`), "x");
    // The moment readiness has read the run, just before it turns to the folder.
    let runRead: () => void = () => {};
    const readinessReadTheRun = new Promise<void>((resolve) => {
      runRead = resolve;
    });
    const store = new Proxy(w.store, {
      get(target, key, receiver) {
        if (key === "read")
          return async (ref: string) => {
            const run = await target.read(ref);
            runRead();
            return run;
          };
        return Reflect.get(target, key, receiver);
      },
    }) as RunStore;
    const { app } = createGateApp({ store, origin: TEST_ORIGIN, allowedHosts: [TEST_HOST], tls: false, insecureHttp: false });
    const served = { ...w, app };
    const { token } = await createAgentToken(w.home, { agent: "claude", runId: w.runId, scopes: ["status"] });
    const order: string[] = [];
    const readiness = call(served, "/mcp", {
      token,
      headers: { accept: "application/json, text/event-stream" },
      json: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "twinlock_readiness", arguments: { planner: PLANNER, handoff_dir: w.handoff } },
      },
    }).then(async (r) => {
      const body = (await r.json()) as { result: { structuredContent: { ready: boolean } } };
      order.push("readiness");
      return body;
    });
    await readinessReadTheRun;
    // Turns of the event loop while readiness works: a readiness that held the loop with synchronous work (a copy of
    // FILES files) lets through a handful at most; one that reads in batches yields once a batch at least.
    const stopCounting = countTurns();
    const health = await call(served, "/healthz");
    order.push(`healthz ${health.status}`);
    const answer = await readiness;
    const turns = stopCounting();
    expect(order).toContain("healthz 200");
    expect(turns).toBeGreaterThan(FILES / 64 / 2);
    expect(answer.result.structuredContent.ready).toBe(true);
    // No copy: the home's scratch folder holds no snapshot of the handoff.
    const tmp = path.join(w.home.dir, "tmp");
    expect(readdirSafe(tmp).filter((n) => n.startsWith("snap-"))).toEqual([]);
  }, 60_000);
});

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
