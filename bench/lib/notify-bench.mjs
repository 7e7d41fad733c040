/**
 * Notifications (issue 27): delivery latency from a decision to a webhook
 * receiver on loopback (p50/p99, one at a time, the deliverer woken by the
 * store's ring), against a bare loopback POST to the same receiver; and the
 * outbox's throughput: N notifications waiting in a gate home's outbox,
 * delivered from a cold start, per second. Folder store only.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { fmtMs, printTable } from "./print-table.mjs";

function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function receiver() {
  const waiters = new Map();
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count++;
      res.writeHead(204).end();
      for (const [n, resolve] of waiters) {
        if (count < n) continue;
        waiters.delete(n);
        resolve(performance.now());
      }
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    count: () => count,
    /** Resolve with the time the n-th delivery arrived. */
    reach: (n) => (count >= n ? Promise.resolve(performance.now()) : new Promise((resolve) => waiters.set(n, resolve))),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}

const created = (home) => ({
  type: "run_created",
  actor: "bench",
  data: {
    run_id: `run_${randomBytes(8).toString("hex")}`,
    home_id: home.id,
    suite: { root: "/bench/suite", suite_id: "bench-suite" },
    settings: { mode: "DRAFT_ONLY", environment: "default", actions: "all", budget: null },
    workflows: [{ planner: "MD-29", executor: "MD-30", executor_title: "Bench executor", pair_digest: `sha256:${"0".repeat(64)}` }],
  },
});
const stop = (i) => ({ type: "stop_raised", actor: "bench", data: { reason: `halt-${i}`, workflow: null, note: null } });

/** Measure; returns the rows' figures for the targets table. */
export async function benchNotify({ root, workDir, quick }) {
  const lib = await import(join(root, "dist", "index.js"));
  const { folderRunStore } = await import(join(root, "dist", "home", "folder-run-store.js"));
  const { addWebhook } = await import(join(root, "dist", "gate", "configure-webhooks.js"));
  const { startNotifier } = await import(join(root, "dist", "gate", "deliver-notifications.js"));
  const samples = quick ? 50 : 200;
  const backlog = quick ? 200 : 1000;

  // Latency: one decision at a time, each timed from before its write to its arrival.
  const home = lib.openGateHome(join(workDir, "latency-home"), { create: true });
  const store = folderRunStore(home);
  const r = await receiver();
  await addWebhook(store, { url: r.url, events: "stop.raised" });
  const ref = join(workDir, "latency-run.json");
  await store.create(ref, [created(home)], new Date());
  const notifier = startNotifier({ store, origin: "http://localhost:7420" });
  const latencies = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await store.update(ref, () => ({ events: [stop(i)], result: undefined }));
    latencies.push((await r.reach(i + 1)) - t0);
  }
  await notifier.close();
  const floors = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const res = await fetch(r.url, { method: "POST", body: "{}" });
    await res.arrayBuffer();
    floors.push(performance.now() - t0);
  }
  await r.close();

  // Throughput: a backlog across 10 runs, waiting before any server starts; delivered from a cold start.
  const home2 = lib.openGateHome(join(workDir, "throughput-home"), { create: true });
  const store2 = folderRunStore(home2);
  const r2 = await receiver();
  await addWebhook(store2, { url: r2.url, events: "stop.raised" });
  for (let run = 0; run < 10; run++) {
    const ref2 = join(workDir, `throughput-${run}.json`);
    await store2.create(ref2, [created(home2)], new Date());
    for (let b = 0; b < backlog / 10 / 10; b++)
      await store2.update(ref2, () => ({ events: Array.from({ length: 10 }, (_, i) => stop(b * 10 + i)), result: undefined }));
  }
  const t0 = performance.now();
  const n2 = startNotifier({ store: store2, origin: "http://localhost:7420", concurrency: 8 });
  await r2.reach(backlog);
  const seconds = (performance.now() - t0) / 1000;
  await n2.close();
  await r2.close();

  const figures = {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    floorP50: percentile(floors, 50),
    floorP99: percentile(floors, 99),
    perSecond: backlog / seconds,
  };
  printTable(
    `Notifications: decision → webhook receiver on loopback (${samples} one at a time), and a ${backlog}-notification outbox backlog`,
    ["measure", "p50", "p99", "floor p50", "floor p99"],
    [
      [
        "latency: folder-store decision → receiver",
        fmtMs(figures.p50),
        fmtMs(figures.p99),
        fmtMs(figures.floorP50),
        fmtMs(figures.floorP99),
      ],
      [`throughput: ${backlog} waiting, delivered from a cold start`, `${figures.perSecond.toFixed(0)}/s`, "", "", ""],
    ],
    ["floor: a bare loopback POST to the same receiver. The latency includes the decision's own write (lock, fsync)."],
  );
  return figures;
}

/** The targets table's rows. */
export function notifyTargets(f) {
  if (!f) return [];
  return [
    ["notification latency decision → receiver p99 (loopback, folder store)", fmtMs(f.p99), "< 500 ms", f.p99 < 500],
    ["outbox throughput (folder store, 10 runs, one webhook)", `${f.perSecond.toFixed(0)}/s`, "≥ 100/s", f.perSecond >= 100],
  ];
}
