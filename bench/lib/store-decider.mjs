/**
 * One gate server's decisions, as its own process, for the store section
 * of the bench (bench/lib/store-bench.mjs), on the built library:
 *
 *   node store-decider.mjs ROOT HOME STORE INDEX CLIENTS RUNS_JSON
 *
 * STORE is a postgres:// URL or "folder" (the gate home HOME with run files);
 * RUNS_JSON the runs to decide on (run IDs, or run-file paths for the folder
 * store). Each of CLIENTS concurrent clients raises stops with unique reasons
 * (`raiseStop`, a real gate decision: verify the run, append an event, write
 * it with the new head), taking the runs in turn. It warms up, says "ready",
 * then on {seconds, decisions} decides until either runs out, and sends back
 * {count, seconds, latencies, asked, runs, revisions} before it exits: per
 * timed decision, its latency (ms), when it was asked (ms on the machine's
 * monotonic clock, which every process shares), the index of its run in
 * RUNS_JSON and the revision its event got (its place in that run's chain,
 * so the order in which the deciders held the run's lock).
 */
import { join } from "node:path";

const [root, homeDir, storeArg, index, clientsArg, runsJson] = process.argv.slice(2);
const { raiseStop } = await import(join(root, "dist", "gate", "hard-stops.js"));
const { openGateHome } = await import(join(root, "dist", "home", "gate-home.js"));
const home = openGateHome(homeDir);
let store;
if (storeArg === "folder") {
  const { folderRunStore } = await import(join(root, "dist", "home", "folder-run-store.js"));
  store = folderRunStore(home);
} else {
  const { postgresRunStore } = await import(join(root, "dist", "store", "postgres", "postgres-run-store.js"));
  store = postgresRunStore(storeArg, home, { max: Number(clientsArg) + 2 });
}
const runs = JSON.parse(runsJson);
const clients = Number(clientsArg);
let next = 0;
const decide = (c) => {
  const k = next++;
  return raiseStop({ store, run: runs[(k + c) % runs.length], reason: `s${index}-c${c}-d${k}`, actor: `server-${index}` });
};

try {
  // Warm-up: a few decisions a client (connections opened, code compiled, each run verified once).
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < 5; i++) await decide(c);
    }),
  );
  process.send("ready");
  const { seconds, decisions } = await new Promise((resolve) => process.once("message", resolve));
  const latencies = [];
  const asked = [];
  const revisions = [];
  const runIndexes = [];
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(seconds * 1e9));
  let started = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (started < decisions && process.hrtime.bigint() < deadline) {
        started++;
        const t0 = process.hrtime.bigint();
        const k = next;
        const run = await decide(c);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        asked.push(Number(t0) / 1e6);
        revisions.push(run.file.revision);
        runIndexes.push((k + c) % runs.length);
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  await new Promise((resolve) =>
    process.send({ count: latencies.length, seconds: elapsed, latencies, asked, revisions, runs: runIndexes }, resolve),
  );
} catch (error) {
  process.stderr.write(`store-decider ${index}: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await store.end?.();
}
