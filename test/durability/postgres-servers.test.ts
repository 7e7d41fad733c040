import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { initRun } from "../../src/gate/init-run.js";
import { readBlob, storeFetchedBlob } from "../../src/home/frozen-bytes.js";
import { verifyChain } from "../../src/run/event-chain.js";
import { migratePostgres, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import { frozenFilesOf } from "../../src/store/run-store.js";
import { freshPostgresDatabase } from "../../src/test-support/postgres-database.js";
import {
  driveTo,
  EXECUTOR,
  makeGateRun,
  pinForTest,
  RUN_EXAMPLE_SUITE,
  removeGateRuns,
  storeOf,
  testHome,
} from "../../src/test-support/run-fixture.js";
import { forkWriter, killLiveWriters } from "../support/child-writer.js";
import { ensureBuilt } from "../support/ensure-built.js";

/** A real PostgreSQL 15 (`.ci/run` starts one and sets TWINLOCK_TEST_POSTGRES). */
const URL_BASE = process.env.TWINLOCK_TEST_POSTGRES;
const DECIDER = fileURLToPath(new URL("../support/pg-decider.mjs", import.meta.url));
const SERVERS = 2;
const CLIENTS = 8;
const DECISIONS = Number(process.env.PG_DECISIONS ?? 10);

const databases: Array<() => Promise<void>> = [];
async function freshDatabase(): Promise<string> {
  const db = await freshPostgresDatabase("twinlock_servers");
  databases.push(db.drop);
  await migratePostgres(db.url);
  return db.url;
}

beforeAll(ensureBuilt, 180_000);
afterEach(killLiveWriters);
afterAll(async () => {
  removeGateRuns();
  for (const drop of databases.splice(0)) await drop();
});

describe.skipIf(!URL_BASE)("several gate servers on one PostgreSQL database", () => {
  it(`lands every decision of ${SERVERS} servers × ${CLIENTS} clients × ${DECISIONS} decisions exactly once, on one unforked chain`, async () => {
    const url = await freshDatabase();
    const home = testHome();
    const store = postgresRunStore(url, home);
    // The team's pins are in the database: a person pins the suite there (its home folder is only a copy).
    await pinForTest(RUN_EXAMPLE_SUITE, true, store.home);
    const run = await initRun({ run: "team/run-1", store, suiteRoot: RUN_EXAMPLE_SUITE, planners: ["MD-29"], actor: "test" });
    const runId = run.state.run_id;
    const servers = Array.from({ length: SERVERS }, (_, i) =>
      forkWriter(DECIDER, [url, home.dir, runId, String(i), String(CLIENTS), String(DECISIONS)]),
    );
    await Promise.all(servers.map((s) => s.ready));
    for (const s of servers) s.go();
    const exits = await Promise.all(servers.map((s) => s.exited));
    for (const [i, e] of exits.entries())
      expect({ server: i, ...e, stderr: servers[i]?.stderr() }).toEqual({ server: i, code: 0, signal: null, stderr: "" });
    const after = await store.read(runId);
    const total = 1 + SERVERS * CLIENTS * DECISIONS;
    expect(after.file.revision).toBe(total);
    expect(after.file.events.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(new Set(after.state.stops.map((s) => s.reason)).size).toBe(total - 1);
    expect(verifyChain(after.file.events, after.file.head).ok).toBe(true);
    await store.close();
  }, 180_000);

  it("lets exactly one of two servers admitting on the same consent win; the consent is used once", async () => {
    const url = await freshDatabase();
    const g = makeGateRun();
    // Drive a run to the consent on the folder store, then carry it into the database through the same events.
    await driveTo(g, "dry_run_ready");
    const folder = await storeOf(g).read(g.runFile);
    const store = postgresRunStore(url, storeOf(g).home);
    await pinForTest(g.suite, true, store.home);
    // Its frozen bytes go with it (as `twinlock import` carries them).
    for (const entry of frozenFilesOf(folder.file.events)) storeFetchedBlob(store.home, entry.sha256, readBlob(storeOf(g).home, entry));
    const [first, ...rest] = folder.file.events;
    if (!first) throw new Error("no events");
    await store.create(folder.state.run_id, [{ type: first.type, actor: first.actor, data: first.data }], new Date(first.at));
    // Beside a run file a handoff folder is recorded relative to it; in the database, absolutely.
    const carried = (e: (typeof rest)[number]) =>
      e.type === "handoff_frozen" ? { ...e.data, dir: path.resolve(g.dir, String(e.data.dir)) } : e.data;
    for (const e of rest)
      await store.update(folder.state.run_id, () => ({ events: [{ type: e.type, actor: e.actor, data: carried(e) }], result: undefined }), {
        now: () => new Date(e.at),
      });
    const runId = folder.state.run_id;
    const servers = Array.from({ length: 2 }, (_, i) =>
      forkWriter(DECIDER, [url, storeOf(g).home.dir, runId, String(i), "admit", EXECUTOR]),
    );
    await Promise.all(servers.map((s) => s.ready));
    for (const s of servers) s.go();
    const exits = await Promise.all(servers.map((s) => s.exited));
    const outs = servers.map((s) => s.stdout());
    expect(exits.map((e, i) => ({ ...e, stderr: servers[i]?.stderr() }))).toEqual(
      servers.map(() => ({ code: 0, signal: null, stderr: "" })),
    );
    expect(
      outs.filter((o) => o.startsWith("admitted")),
      JSON.stringify(outs),
    ).toHaveLength(1);
    expect(outs.filter((o) => o.startsWith("refused"))).toHaveLength(1);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const used = await c.query("SELECT count(*)::int AS n FROM twinlock_consumed_consents");
    await c.end();
    expect(used.rows[0].n).toBe(1);
    const after = await store.read(runId);
    expect(after.file.events.filter((e) => e.type === "admitted")).toHaveLength(1);
    await store.close();
  }, 120_000);

  it("leaves the database consistent when a server is killed mid-decision: each decision is all there or absent, and the next one proceeds", async () => {
    const url = await freshDatabase();
    const home = testHome();
    const store = postgresRunStore(url, home);
    // The team's pins are in the database: a person pins the suite there (its home folder is only a copy).
    await pinForTest(RUN_EXAMPLE_SUITE, true, store.home);
    const run = await initRun({ run: "team/killed", store, suiteRoot: RUN_EXAMPLE_SUITE, planners: ["MD-29"], actor: "test" });
    const runId = run.state.run_id;
    for (let round = 0; round < 3; round++) {
      const server = forkWriter(DECIDER, [url, home.dir, runId, `k${round}`, "4", "1000"]);
      await server.ready;
      server.go();
      await new Promise((resolve) => setTimeout(resolve, 150 + round * 100));
      server.child.kill("SIGKILL");
      expect((await server.exited).signal).toBe("SIGKILL");
    }
    const after = await store.read(runId);
    expect(verifyChain(after.file.events, after.file.head).ok).toBe(true);
    // The kills came while decisions were landing (some did), and nothing half-written is there.
    expect(after.file.revision).toBeGreaterThan(1);
    expect(after.state.stops).toHaveLength(after.file.revision - 1);
    expect(new Set(after.state.stops.map((s) => s.reason)).size).toBe(after.state.stops.length);
    const { run: next } = await store.update(runId, () => ({
      events: [{ type: "stop_raised", actor: "test", data: { reason: "after-kill", workflow: null, note: null } }],
      result: undefined,
    }));
    expect(next.file.revision).toBe(after.file.revision + 1);
    await store.close();
  }, 120_000);
});
