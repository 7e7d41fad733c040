/**
 * The benchmark's gate-server section (issue 10 part 7). `twinlock serve`
 * runs as its own process (as a person starts it, through bin/twinlock.cjs,
 * with --quiet: no access log), and so does each floor, so the load
 * generator (bench/lib/load-generator.mjs, in this process) never shares a
 * server's event loop. On loopback, with the same generator and settings:
 *
 *   1. floors: a bare node:http server answering a small fixed JSON body, and
 *      a one-route Hono app on @hono/node-server (what the gate server is
 *      built on), so the framework's share is visible;
 *   2. the agent routes on a gate home holding a few runs: status
 *      (GET /api/runs/:run/pairs/:planner) and the admission check
 *      (POST /api/runs/:run/executors/:executor/admission-check, body {}),
 *      each with its run's own agent token, on runs made as in real use
 *      (bench/lib/gate-runs.mjs: the realistic 257-prompt suite, signed
 *      receipts required, init → signed freeze → signed review → signed
 *      consent), so every admission check runs every check and would admit;
 *   3. the same home grown to 1,000 runs (BENCH_QUICK: 100): a fresh server
 *      process's memory (VmRSS, VmHWM from /proc/PID/status) after start,
 *      after a status request for every run, after an admission check for
 *      every run, and after the load; then the two routes again.
 *
 * Making the runs dominates a full run's time here (each run is four signed
 * library steps that each load the pinned 257-prompt suite: ~0.2 s a run on
 * an idle 2-core machine, so ~3 min for 1,000).
 *
 * Each measurement is 1 client and 8 clients on one keep-alive agent, for a
 * fixed time (or a request cap), after a warm-up. A response that is not
 * 200 stops the bench: a figure over failing requests would mean nothing.
 */
import { join } from "node:path";
import { admissionCheckRequest, loadGateLibrary, prepareGateRuns, statusRequest } from "./gate-runs.mjs";
import { runLoad } from "./load-generator.mjs";
import { fmtMiB, fmtMs, fmtRatio, printTable } from "./print-table.mjs";
import { procMemory, startServerProcess } from "./server-process.mjs";
import { makeSignedSuite } from "./signed-suite.mjs";

const CLIENTS = [1, 8];
/** Runs in the home for the latency rows: a few agents' runs, as a gate home starts. */
const FEW_RUNS = 8;

/**
 * Run the section on `suiteDir` (the realistic 257-prompt suite) in
 * `workDir`; print its tables; return the figures the Targets table uses.
 */
export async function benchGateServer({ root, cli, suiteDir, workDir, quick, startupFloorMs }) {
  const manyRuns = quick ? 100 : 1000;
  // Warm-up: up to 500 requests or half a second (1 s in a full run), so the floors' JIT is warm too.
  const load = { maxSeconds: quick ? 2 : 6, requests: quick ? 20_000 : 200_000, warmup: 500, warmupSeconds: quick ? 0.5 : 1 };
  const lib = await loadGateLibrary(root);
  const signed = await makeSignedSuite(root, suiteDir, join(workDir, "signed"), cli);
  const env = { ...process.env, TWINLOCK_HOME: signed.home };
  const serve = () => startServerProcess([cli, "serve", "--listen", "127.0.0.1:0", "--quiet"], { env });
  const runsDir = join(workDir, "runs");
  const rows = [];

  const measure = async (server, label, route, runsInHome, makeRequest) => {
    const byClients = {};
    for (const concurrency of CLIENTS) {
      const r = await runLoad({ url: server.url, concurrency, ...load, request: makeRequest });
      if (r.errors > 0)
        throw new Error(
          `${label} ${route}: ${r.errors} of ${r.count} requests failed (first: ${r.firstError})\n${server.stderr?.().slice(-2000) ?? ""}`,
        );
      byClients[concurrency] = r;
      rows.push({ label, route, runsInHome, ...r });
    }
    return byClients;
  };

  // 1. Floors.
  const floors = {};
  for (const [kind, label] of [
    ["http", "node:http (floor)"],
    ["hono", "hono, one route"],
  ]) {
    const server = await startServerProcess([join(root, "bench", "lib", "floor-server.mjs"), kind]);
    try {
      const startKiB = procMemory(server.pid).rssKiB;
      floors[kind] = { ...(await measure(server, label, "fixed JSON", "–", () => ({ method: "GET", path: "/api/floor" }))), startKiB };
    } finally {
      await server.stop();
    }
  }

  // 2. A gate home with a few runs.
  const few = await prepareGateRuns({ lib, signed, dir: runsDir, from: 0, to: FEW_RUNS });
  const fewServer = await serve();
  let fewStatus;
  let fewAdmission;
  try {
    await expectReadyRun(fewServer, few[0]);
    fewStatus = await measure(fewServer, "twinlock serve", "status", FEW_RUNS, (i) => statusRequest(few[i % few.length]));
    fewAdmission = await measure(fewServer, "twinlock serve", "admission check", FEW_RUNS, (i) =>
      admissionCheckRequest(few[i % few.length]),
    );
  } finally {
    await fewServer.stop();
  }

  // 3. The same home grown to `manyRuns` runs: memory of a fresh server, then the routes again.
  const t0 = performance.now();
  const rest = await prepareGateRuns({ lib, signed, dir: runsDir, from: FEW_RUNS, to: manyRuns, concurrency: 8 });
  const makeSeconds = (performance.now() - t0) / 1000;
  const all = [...few, ...rest];
  const manyServer = await serve();
  const memory = [];
  let manyStatus;
  let manyAdmission;
  try {
    memory.push(["after start", procMemory(manyServer.pid)]);
    const eachStatus = await runLoad({
      url: manyServer.url,
      concurrency: 8,
      requests: all.length,
      maxSeconds: 600,
      request: (i) => statusRequest(all[i]),
    });
    if (eachStatus.errors > 0 || eachStatus.count !== all.length)
      throw new Error(`status of every run: ${eachStatus.errors} failed of ${eachStatus.count} (${eachStatus.firstError})`);
    memory.push([`after a status request for each of the ${all.length.toLocaleString("en-US")} runs`, procMemory(manyServer.pid)]);
    const eachAdmission = await runLoad({
      url: manyServer.url,
      concurrency: 8,
      requests: all.length,
      maxSeconds: 600,
      request: (i) => admissionCheckRequest(all[i]),
    });
    if (eachAdmission.errors > 0 || eachAdmission.count !== all.length)
      throw new Error(
        `admission check of every run: ${eachAdmission.errors} failed of ${eachAdmission.count} (${eachAdmission.firstError})`,
      );
    memory.push([`after an admission check for each run too`, procMemory(manyServer.pid)]);
    manyStatus = await measure(manyServer, "twinlock serve", "status", all.length, (i) => statusRequest(all[(i * 7919) % all.length]));
    manyAdmission = await measure(manyServer, "twinlock serve", "admission check", all.length, (i) =>
      admissionCheckRequest(all[(i * 7919) % all.length]),
    );
    memory.push([`after the ${all.length.toLocaleString("en-US")}-run rows of the table above`, procMemory(manyServer.pid)]);
  } finally {
    await manyServer.stop();
  }

  // The tables.
  const floorOf = (r) => floors.http[r.concurrency];
  printTable(
    `Gate server on loopback (\`twinlock serve\`, realistic 257-prompt suite, signed receipts; floor: bare node:http, same load generator)`,
    ["server", "route", "runs in home", "clients", "requests", "req/s", "p50", "p99", "req/s vs floor", "p50 vs floor", "p99 vs floor"],
    rows.map((r) => [
      r.label,
      r.route,
      typeof r.runsInHome === "number" ? r.runsInHome.toLocaleString("en-US") : r.runsInHome,
      String(r.concurrency),
      r.count.toLocaleString("en-US"),
      r.rps.toFixed(0),
      fmtLatency(r.p50),
      fmtLatency(r.p99),
      fmtRatio(r.rps / floorOf(r).rps),
      fmtRatio(r.p50 / floorOf(r).p50),
      fmtRatio(r.p99 / floorOf(r).p99),
    ]),
    [
      `each row: ${load.maxSeconds} s (or ${load.requests.toLocaleString("en-US")} requests) after ${load.warmupSeconds} s (or ${load.warmup}) of warm-up requests, N clients on one keep-alive http.Agent (maxSockets N), each server its own process;`,
      "latency: request written to the last byte of the answer read. Ratios against the node:http floor with the same clients measured in this run.",
      `status: GET /api/runs/RUN/pairs/PLANNER; admission check: POST …/executors/EXECUTOR/admission-check {}; each request with its run's own agent token, runs taken in turn.`,
      `every admission check ran all its checks and would admit (checked on the first answer); ${rest.length.toLocaleString("en-US")} more runs made in ${makeSeconds.toFixed(1)} s for the last rows.`,
    ],
  );
  const [, , , afterLoad] = memory;
  const [, afterStatus] = memory;
  const start = memory[0][1];
  const perThousand = ((afterStatus[1].rssKiB - start.rssKiB) * 1000) / all.length;
  printTable(
    `Gate server memory (one \`twinlock serve\` process, ${all.length.toLocaleString("en-US")} runs in its gate home${quick ? ", BENCH_QUICK: 1,000 in a full run" : ""})`,
    ["when", "VmRSS", "VmHWM"],
    [
      ["node:http floor, after start (reference)", fmtMiB(floors.http.startKiB), ""],
      ...memory.map(([when, m]) => [when, fmtMiB(m.rssKiB), fmtMiB(m.hwmKiB)]),
    ],
    [
      `from /proc/PID/status. Growth from start to after a status of every run: ${fmtMiB(afterStatus[1].rssKiB - start.rssKiB)}, ${fmtMiB(perThousand)} per 1,000 runs${quick ? " (scaled from 100)" : ""}.`,
    ],
  );

  return {
    manyRuns: all.length,
    floorP50: floors.http[1].p50,
    fewStatus,
    fewAdmission,
    manyStatus,
    manyAdmission,
    startupFloorMs,
    peakKiB: Math.max(...memory.map(([, m]) => m.hwmKiB)),
    afterLoadKiB: afterLoad[1].rssKiB,
    perThousandKiB: perThousand,
  };
}

/**
 * The rows the Targets table adds for the server, with why each target is
 * what a careful user would want of a gate that sits in front of agent calls.
 */
export function serverTargets(s, quick) {
  const statusVsFloor = s.fewStatus[1].p50 / s.floorP50;
  const admissionVsStartup = s.fewAdmission[1].p99 / s.startupFloorMs;
  const growth = s.manyStatus[1].p50 / s.fewStatus[1].p50;
  const runs = s.manyRuns.toLocaleString("en-US");
  return [
    // Status is what an agent polls while it waits for a person: one small run read, nothing heavier. Ten times a
    // bare server leaves room for the token check, the run's chain verification and the status itself.
    [`server status p50, 1 client, ${FEW_RUNS} runs in home (vs node:http floor)`, statusVsFloor, "≤ ×10.00", statusVsFloor <= 10],
    // The server exists so an agent's check does not start a process: an admission check, even its p99, should
    // answer sooner than `node -e ''` can start (which every `twinlock admit` pays before any work).
    ["server admission check p99, 1 client (vs node -e '' start-up)", admissionVsStartup, "≤ ×1.00", admissionVsStartup <= 1],
    // A gate home only grows (runs are kept for audit): what one request costs must not grow with the runs it holds.
    [`server status p50, 1 client, ${runs} runs vs ${FEW_RUNS} runs in home`, growth, "≤ ×1.50", growth <= 1.5],
    // A long-running gate beside agents and editors on a laptop or a small VM: ≤ 300 MiB at its peak with 1,000 runs.
    [
      `server peak memory (VmHWM), ${runs} runs${quick ? " (BENCH_QUICK; 1,000 in a full run)" : ""}`,
      fmtMiB(s.peakKiB),
      "≤ 300 MiB",
      s.peakKiB <= 300 * 1024,
    ],
  ];
}

/** The first run's status says dry_run_ready, and its admission check ran every check and would admit. */
async function expectReadyRun(server, run) {
  const status = await runOnce(server, statusRequest(run));
  if (status.status?.state !== "dry_run_ready")
    throw new Error(`the bench run ${run.runId} is in ${status.status?.state ?? JSON.stringify(status)}, not dry_run_ready`);
  const check = await runOnce(server, admissionCheckRequest(run));
  if (check.would_admit !== true || !Array.isArray(check.checks) || check.checks.some((c) => !c.ok))
    throw new Error(`the bench run's admission check would not admit: ${JSON.stringify(check).slice(0, 1000)}`);
}

async function runOnce(server, { method, path, headers, body }) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/** Latency with enough digits below a millisecond. */
function fmtLatency(ms) {
  return ms < 1 ? `${ms.toFixed(3)} ms` : fmtMs(ms);
}
