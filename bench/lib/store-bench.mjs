/**
 * The benchmark's store section (issue 12 part 6): how fast gate decisions
 * land on the team store (PostgreSQL 15, one database) with 1 and 2 decider
 * processes, against the folder store (one gate home, run files) on the
 * same machine, measured in the same run.
 *
 * A decision is a real gate operation: `raiseStop` with a unique reason
 * (read and verify the run, append a `stop_raised` event, write it with the
 * new head), as a gate server makes it. Each decider is its own process
 * (bench/lib/store-decider.mjs) with CLIENTS concurrent clients, on fresh
 * runs for each row, taken in turn, so the clients contend for the same runs
 * as a team's agents and reviewers do. A row runs for a fixed time (or a
 * decision cap) after a warm-up; afterwards every run is read back and the
 * decisions counted, so a figure over lost decisions stops the bench.
 *
 * The section starts its own throwaway cluster with scripts/pg-cluster.sh in
 * a folder directly under /tmp (the cluster's owner must reach it), and stops
 * and removes it however the bench ends. Without PostgreSQL 15's binaries it
 * prints one line and measures nothing.
 */
import { fork, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { realisticPairs } from "./gate-runs.mjs";
import { fmtMs, fmtRatio, printTable } from "./print-table.mjs";
import { watchChild } from "./server-process.mjs";
import { makeSignedSuite } from "./signed-suite.mjs";

const INITDB = `${process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin"}/initdb`;
const CLIENTS = 8;
/** Runs each row decides on, shared by all its clients. */
const RUNS = 8;
/** Warm-up decisions each client makes before the timed part (store-decider.mjs). */
const WARMUP_PER_CLIENT = 5;

/**
 * Run the section in `workDir` on a signed copy of `suiteDir`; print its
 * table; return the figures the Targets table uses, or undefined when skipped.
 */
export async function benchStores({ root, cli, suiteDir, workDir, quick }) {
  if (!existsSync(INITDB)) {
    process.stdout.write(`\nStores (PostgreSQL vs folder): skipped, PostgreSQL 15 is not installed (no ${INITDB})\n`);
    return undefined;
  }
  const load = { seconds: quick ? 2 : 8, decisions: quick ? 20_000 : 200_000 };
  const lib = await import(join(root, "dist", "index.js"));
  const { postgresRunStore, migratePostgres } = await import(join(root, "dist", "store", "postgres", "postgres-run-store.js"));
  const signed = await makeSignedSuite(root, suiteDir, join(workDir, "signed"), cli);
  const home = lib.openGateHome(signed.home);
  const cluster = startCluster(root);
  try {
    await migratePostgres(cluster.url);
    const pgStore = postgresRunStore(cluster.url, home);
    // A team store's pins are the database's: the bench reviewer pins the suite there too.
    const { createPrivateKey } = await import("node:crypto");
    await lib.pinSuite(pgStore.home, { suiteDir: signed.suite, key: createPrivateKey(readFileSync(signed.key)) });
    const folderStore = lib.folderRunStore(home);
    // The realistic suite's first pair (every run needs a planner; a stop names none).
    const firstPlanner = realisticPairs()[0].planner;
    const rows = [];
    try {
      for (const [kind, processes] of [
        ["folder", 1],
        ["folder", 2],
        ["postgres", 1],
        ["postgres", 2],
      ]) {
        const store = kind === "folder" ? folderStore : pgStore;
        const label = `${kind}-${processes}`;
        const refs = [];
        for (let i = 0; i < RUNS; i++) {
          const ref = kind === "folder" ? join(workDir, label, `run-${i}.json`) : `bench/${label}-${i}`;
          if (kind === "folder") mkdirSync(join(workDir, label), { recursive: true });
          const run = await lib.initRun({ store, run: ref, suiteRoot: signed.suite, planners: [firstPlanner], actor: "bench" });
          refs.push(kind === "folder" ? ref : run.state.run_id);
        }
        const result = await runDeciders(root, signed.home, kind === "folder" ? "folder" : cluster.url, processes, refs, load);
        // Every decision counted must be in the runs: the warm-up's, the timed ones, and nothing more.
        let landed = 0;
        for (const ref of refs) landed += (await store.read(ref)).state.stops.length;
        const expected = result.count + processes * CLIENTS * WARMUP_PER_CLIENT;
        if (landed !== expected)
          throw new Error(`${label}: ${landed} stops in the runs, but the deciders counted ${expected} decisions (warm-up included)`);
        rows.push({ kind, processes, ...result, eventsPerRun: Math.round(landed / RUNS) });
      }
    } finally {
      await pgStore.close();
    }

    const folderOne = rows.find((r) => r.kind === "folder" && r.processes === 1);
    printTable(
      `Stores: gate decisions (raiseStop) on PostgreSQL 15 vs the folder store, same machine (reference: folder store, 1 process)`,
      ["store", "processes", "clients", "decisions", "decisions/s", "p50", "p99", "events/run at end", "dec/s vs ref", "p99 vs ref"],
      rows.map((r) => [
        r.kind === "folder" ? "folder (one gate home, run files)" : "PostgreSQL (one database)",
        String(r.processes),
        String(r.processes * CLIENTS),
        r.count.toLocaleString("en-US"),
        r.rps.toFixed(0),
        fmtLatency(r.p50),
        fmtLatency(r.p99),
        String(r.eventsPerRun),
        fmtRatio(r.rps / folderOne.rps),
        fmtRatio(r.p99 / folderOne.p99),
      ]),
      [
        `each row: fresh ${RUNS} runs shared by all its clients (taken in turn), ${CLIENTS} clients a process, ${load.seconds} s (or ${load.decisions.toLocaleString("en-US")} decisions) after ${WARMUP_PER_CLIENT} warm-up decisions a client;`,
        "latency: raiseStop called to resolved, in the decider process; every run read back afterwards and every decision found once.",
        `PostgreSQL: a throwaway cluster (scripts/pg-cluster.sh, fsync on) on loopback, removed at the end; the folder store fsyncs each write too.`,
        `the deciders and the database share this machine's ${cpus().length} CPU(s): 2 processes add throughput only where there are cores to spare.`,
      ],
    );
    return {
      folderOne,
      pgOne: rows.find((r) => r.kind === "postgres" && r.processes === 1),
      pgTwo: rows.find((r) => r.kind === "postgres" && r.processes === 2),
    };
  } finally {
    cluster.stop();
  }
}

/**
 * The rows the Targets table adds for the stores, or none when the section
 * was skipped.
 */
export function storeTargets(s) {
  if (!s) return [];
  const twoVsFolder = s.pgTwo.rps / s.folderOne.rps;
  const p99VsFolder = s.pgTwo.p99 / s.folderOne.p99;
  return [
    // The team store exists so several servers share one gate: two of them on one database must decide at least as
    // fast as the one machine's folder store they replace, or a team would be better off on one server.
    ["PostgreSQL, 2 processes: decisions/s vs folder store, 1 process", twoVsFolder, "≥ ×1.00", twoVsFolder >= 1],
    // Nor may sharing make the slowest decisions slower: an agent waits on each one.
    ["PostgreSQL, 2 processes: decision p99 vs folder store, 1 process", p99VsFolder, "≤ ×1.00", p99VsFolder <= 1],
  ];
}

/**
 * The folder store's decisions with 8 clients, each its own process, on one
 * run: every decision waits for the run's lock behind the others. p50 and
 * p99 of a decision, and whether the clients were served in the order they
 * asked: each records when it asked (the machine's monotonic clock, shared
 * by every process) and the revision its event got (the order in which the
 * deciders held the lock), and a pair of decisions is an inversion when the
 * one asked later was written first. Asks closer than FAIR_MARGIN_MS are not
 * counted (a fair queue cannot order what it has not yet been asked).
 * Runs without PostgreSQL.
 */
export async function benchFolderFairness({ root, cli, suiteDir, workDir, quick }) {
  const load = { seconds: quick ? 4 : 10, decisions: quick ? 20_000 : 200_000 };
  const lib = await import(join(root, "dist", "index.js"));
  const signed = await makeSignedSuite(root, suiteDir, join(workDir, "signed"), cli);
  const store = lib.folderRunStore(lib.openGateHome(signed.home));
  const ref = join(workDir, "fair", "run.json");
  mkdirSync(join(workDir, "fair"), { recursive: true });
  await lib.initRun({ store, run: ref, suiteRoot: signed.suite, planners: [realisticPairs()[0].planner], actor: "bench" });
  const loadBefore = loadavg()[0];
  const r = await runDeciders(root, signed.home, "folder", FAIR_CLIENTS, [ref], load, 1);
  const loadAfter = loadavg()[0];
  const finalRun = await store.read(ref);
  const landed = finalRun.state.stops.length;
  // The order the stop requests became visible in the gate home (their IDs' monotonic stamps, ns) against the order
  // they were written into the chain: what a fold can order (it cannot order a request not yet made visible).
  const visible = finalRun.file.events.flatMap((e) => {
    const id = e.type === "stop_raised" ? e.data.request : undefined;
    return typeof id === "string" && /^\d{20}-/.test(id)
      ? [{ asked: Number(BigInt(id.slice(0, 20)) / 1000n) / 1000, revision: e.seq, run: 0 }]
      : [];
  });
  const visibleOrder = countInversions(visible, 0);
  const expected = r.count + FAIR_CLIENTS * WARMUP_PER_CLIENT;
  if (landed !== expected)
    throw new Error(`fair lock: ${landed} stops in the run, but the deciders counted ${expected} decisions (warm-up included)`);
  const order = countInversions(r.decisions, FAIR_MARGIN_MS);
  const rawOrder = countInversions(r.decisions, 0);
  const result = {
    ...r,
    ...order,
    rawInversions: rawOrder.inversions,
    visibleInversions: visibleOrder.inversions,
    visibleCount: visible.length,
  };
  printTable(
    `The folder store's decisions with ${FAIR_CLIENTS} clients served in arrival order (${FAIR_CLIENTS} client processes, one run; target p99 ≤ ${FAIR_TARGET_P99_MS} ms, no inversions)`,
    [
      "clients",
      "decisions",
      "decisions/s",
      "p50",
      "p99",
      "max",
      "inversions",
      "decisions overtaken",
      "longest overtaken wait",
      "out of visible order",
    ],
    [
      [
        String(FAIR_CLIENTS),
        r.count.toLocaleString("en-US"),
        r.rps.toFixed(0),
        fmtLatency(r.p50),
        fmtLatency(r.p99),
        fmtLatency(r.max),
        result.inversions.toLocaleString("en-US"),
        `${result.overtaken.toLocaleString("en-US")} (${((100 * result.overtaken) / Math.max(1, r.count)).toFixed(1)}%)`,
        fmtLatency(result.longestOvertakenMs),
        `${result.visibleInversions.toLocaleString("en-US")} of ${result.visibleCount.toLocaleString("en-US")}`,
      ],
    ],
    [
      `each client its own process (bench/lib/store-decider.mjs), one decision (raiseStop) at a time on the same run, ${load.seconds} s after ${WARMUP_PER_CLIENT} warm-up decisions a client;`,
      `inversion: a pair of decisions where the one asked more than ${FAIR_MARGIN_MS} ms later got the lock first (its event came earlier in the run); ${rawOrder.inversions.toLocaleString("en-US")} with no margin.`,
      "decisions overtaken: those that some decision asked later was served before; their longest wait is the next column.",
      "out of visible order: pairs of stops written into the chain in another order than their requests became visible in the gate home (the IDs' monotonic stamps), over every stop of the run.",
      // Every figure here is the fsync latency and CPU share of a shared machine: the load beside it says which.
      `machine load (1-minute average) ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after, on ${cpus().length} CPU(s).`,
    ],
  );
  return result;
}

/** 8 clients, as the issue that asked for arrival order measured them. */
const FAIR_CLIENTS = 8;
const FAIR_TARGET_P99_MS = 200;
const FAIR_MARGIN_MS = 1;

/**
 * Count the pairs of `decisions` ({ asked, revision, run }) on the same run
 * where one asked more than `marginMs` later got the earlier revision, the
 * decisions so overtaken, and the longest wait among them. O(n log n) per run
 * when the margin is 0; with a margin, a merge over the asks in order.
 */
export function countInversions(decisions, marginMs = 0) {
  const byRun = new Map();
  for (const d of decisions) {
    if (!byRun.has(d.run)) byRun.set(d.run, []);
    byRun.get(d.run).push(d);
  }
  let inversions = 0;
  let overtaken = 0;
  let longestOvertakenMs = 0;
  for (const list of byRun.values()) {
    list.sort((a, b) => a.asked - b.asked);
    // For each decision, the asks more than marginMs later that got a lower revision. The clients are few and the
    // list is in ask order, so a sweep with a sorted array of the revisions of the decisions asked `marginMs` later works.
    const later = [];
    let j = list.length;
    for (let i = list.length - 1; i >= 0; i--) {
      const d = list[i];
      while (j > i + 1 && list[j - 1].asked > d.asked + marginMs) {
        j--;
        insertSorted(later, list[j].revision);
      }
      // later holds the revisions of every decision asked more than marginMs after d.
      const lower = lowerBound(later, d.revision);
      inversions += lower;
      if (lower > 0) {
        overtaken++;
        longestOvertakenMs = Math.max(longestOvertakenMs, d.latency ?? 0);
      }
    }
  }
  return { inversions, overtaken, longestOvertakenMs };
}

function lowerBound(sorted, value) {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted(sorted, value) {
  sorted.splice(lowerBound(sorted, value), 0, value);
}

/** The Targets table's rows for the fair-lock measure. */
export function fairnessTargets(f) {
  if (!f) return [];
  return [
    // A person's stop must not wait seconds behind agents' calls: the slowest decisions are what a person meets.
    [
      `folder store, ${FAIR_CLIENTS} client processes on one run: decision p99`,
      `${fmtLatency(f.p99)} (p50 ${fmtLatency(f.p50)})`,
      `≤ ${FAIR_TARGET_P99_MS} ms`,
      f.p99 <= FAIR_TARGET_P99_MS,
    ],
    // Waiting writers served in arrival order: a later caller (an agent's admit) must not overtake a waiting one (a stop).
    [
      `folder store, ${FAIR_CLIENTS} client processes on one run: decisions served out of arrival order`,
      `${f.inversions.toLocaleString("en-US")} inversions`,
      "0",
      f.inversions === 0,
    ],
    // What a fold can order: stops written into the chain in the order their requests became visible in the gate home.
    [
      `folder store, ${FAIR_CLIENTS} client processes on one run: stops written out of the order they became visible`,
      `${f.visibleInversions.toLocaleString("en-US")} inversions`,
      "0",
      f.visibleInversions === 0,
    ],
  ];
}

/** Start `processes` deciders of `clients` clients each, warm them up, let them decide for `load`, and merge their figures. */
async function runDeciders(root, homeDir, storeArg, processes, refs, load, clients = CLIENTS) {
  const script = join(root, "bench", "lib", "store-decider.mjs");
  const children = Array.from({ length: processes }, (_, i) =>
    startDecider(script, [root, homeDir, storeArg, String(i), String(clients), JSON.stringify(refs)]),
  );
  try {
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.child.send(load);
    const results = await Promise.all(children.map((c) => c.result));
    const latencies = Float64Array.from(results.flatMap((r) => r.latencies)).sort();
    const count = latencies.length;
    const seconds = Math.max(...results.map((r) => r.seconds));
    const pct = (p) => latencies[Math.min(count - 1, Math.ceil((p / 100) * count) - 1)];
    const decisions = results.flatMap((r) =>
      r.asked.map((asked, i) => ({ asked, revision: r.revisions[i], run: r.runs[i], latency: r.latencies[i] })),
    );
    return { count, seconds, rps: count / seconds, p50: pct(50), p99: pct(99), max: latencies[count - 1], decisions };
  } finally {
    for (const c of children) c.kill();
  }
}

function startDecider(script, args) {
  const child = fork(script, args, { execArgv: [], stdio: ["ignore", "ignore", "pipe", "ipc"] });
  const { exited, stderr } = watchChild(child, 8192);
  const failed = (what) =>
    exited.then(({ code, signal }) => {
      throw new Error(`a store decider exited (${code ?? signal}) before ${what}:\n${stderr().slice(-2000)}`);
    });
  const ready = Promise.race([new Promise((resolve) => child.once("message", (m) => m === "ready" && resolve())), failed("it was ready")]);
  const result = ready.then(() => Promise.race([new Promise((resolve) => child.once("message", resolve)), failed("it reported")]));
  ready.catch(() => {});
  result.catch(() => {});
  return {
    child,
    ready,
    result,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/**
 * A throwaway PostgreSQL 15 cluster in a new folder directly under /tmp (as
 * root the cluster runs as `postgres`, which must reach it); stopped and
 * removed by `stop()`, or when the bench process exits first.
 */
function startCluster(root) {
  const script = join(root, "scripts", "pg-cluster.sh");
  const dir = mkdtempSync("/tmp/twinlock-bench-pg-");
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    spawnSync("bash", [script, "stop", dir], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  process.on("exit", stop);
  const r = spawnSync("bash", [script, "start", dir], { encoding: "utf8" });
  const url = r.stdout.trim().split("\n").pop() ?? "";
  if (r.status !== 0 || !url.startsWith("postgres://")) {
    stop();
    throw new Error(`scripts/pg-cluster.sh start ${dir} failed (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  }
  return { url, stop };
}

/** Latency with enough digits below a millisecond. */
function fmtLatency(ms) {
  return ms < 1 ? `${ms.toFixed(3)} ms` : fmtMs(ms);
}
