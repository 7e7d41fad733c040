import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { initRun } from "../../src/gate/init-run.js";
import { verifyChain } from "../../src/run/event-chain.js";
import { migratePostgres, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import { pinForTest, RUN_EXAMPLE_SUITE, removeGateRuns, testHome } from "../../src/test-support/run-fixture.js";
import { forkWriter, killLiveWriters } from "../support/child-writer.js";
import { ensureBuilt } from "../support/ensure-built.js";

/**
 * The database restarted under load (issue 12 part 5). The test starts its own throwaway cluster (so it may restart
 * it) when PostgreSQL tests are on (TWINLOCK_TEST_POSTGRES) and PostgreSQL 15 is installed, and removes it after.
 */
const BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
const ENABLED = Boolean(process.env.TWINLOCK_TEST_POSTGRES) && existsSync(`${BIN}/pg_ctl`);
const CLUSTER_SCRIPT = fileURLToPath(new URL("../../scripts/pg-cluster.sh", import.meta.url));
const DECIDER = fileURLToPath(new URL("../support/pg-restart-decider.mjs", import.meta.url));
const SERVERS = 2;
const CLIENTS = 4;
const DECISIONS = 150;

let clusterDir: string | undefined;
let url = "";

/** Run a PostgreSQL program as the cluster's owner (as root: the `postgres` user, as scripts/pg-cluster.sh does). */
function asOwner(program: string, args: string[]) {
  const [cmd, argv] = process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args];
  const r = spawnSync(cmd as string, argv as string[], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${program} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
}

beforeAll(async () => {
  if (!ENABLED) return;
  await ensureBuilt();
  // Directly under /tmp: the cluster's owner must reach its folder.
  clusterDir = mkdtempSync("/tmp/twinlock-restart-");
  const r = spawnSync("bash", [CLUSTER_SCRIPT, "start", clusterDir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`scripts/pg-cluster.sh start failed: ${r.stderr}`);
  url = r.stdout.trim();
  await migratePostgres(url);
}, 180_000);
afterEach(killLiveWriters);
afterAll(() => {
  removeGateRuns();
  if (clusterDir) spawnSync("bash", [CLUSTER_SCRIPT, "stop", clusterDir], { stdio: "ignore" });
});

describe.skipIf(!ENABLED)("a PostgreSQL database restarted while servers decide", () => {
  it("gives clients a retryable 'not reachable … try again' error, and after their retries every decision is in the run exactly once on a whole chain", async () => {
    const home = testHome();
    const store = postgresRunStore(url, home);
    // The team's pins are in the database: a person pins the suite there (its home folder is only a copy).
    await pinForTest(RUN_EXAMPLE_SUITE, true, store.home);
    const run = await initRun({ run: "team/restarted", store, suiteRoot: RUN_EXAMPLE_SUITE, planners: ["MD-29"], actor: "test" });
    const runId = run.state.run_id;
    await store.close();
    const servers = Array.from({ length: SERVERS }, (_, i) =>
      forkWriter(DECIDER, [url, home.dir, runId, String(i), String(CLIENTS), String(DECISIONS)]),
    );
    await Promise.all(servers.map((s) => s.ready));
    for (const s of servers) s.go();
    // Twice, while the servers are deciding: a fast restart ends every connection, committed or not.
    for (const wait of [400, 600]) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      asOwner(`${BIN}/pg_ctl`, ["-D", `${clusterDir}/data`, "-l", `${clusterDir}/log`, "-m", "fast", "-w", "restart"]);
    }
    const exits = await Promise.all(servers.map((s) => s.exited));
    for (const [i, e] of exits.entries())
      expect({ server: i, ...e, stderr: servers[i]?.stderr() }).toEqual({ server: i, code: 0, signal: null, stderr: "" });
    const reports = servers.map((s) => JSON.parse(s.stdout()) as { told: string[]; retried: number; messages: string[] });

    // The restarts reached the clients, as errors that say to try again.
    expect(reports.reduce((n, r) => n + r.retried, 0)).toBeGreaterThan(0);
    for (const message of reports.flatMap((r) => r.messages))
      expect(message).toMatch(
        /is not reachable \(.+\); nothing was recorded — try again|may have been recorded — read the run before repeating it/,
      );

    const reader = postgresRunStore(url, home);
    const after = await reader.read(runId);
    await reader.close();
    const reasons = after.state.stops.map((s) => s.reason);
    const told = reports.flatMap((r) => r.told);
    expect(told).toHaveLength(SERVERS * CLIENTS * DECISIONS);
    expect(new Set(reasons).size).toBe(reasons.length);
    expect([...reasons].sort()).toEqual([...told].sort());
    expect(after.file.revision).toBe(1 + told.length);
    expect(verifyChain(after.file.events, after.file.head).ok).toBe(true);
  }, 180_000);
});
