/**
 * Notifications (issue 27): delivery latency from an event (and from the
 * decision that records it) to a webhook receiver on loopback (p50/p99, one
 * at a time, the deliverer woken by the store's ring), as ratios against
 * floors measured in the same run: a bare loopback POST to the same receiver
 * and the decision's write alone; and the outbox's throughput: N
 * notifications waiting in a gate home's outbox, delivered from a cold start,
 * per second, against as many bare POSTs 8 at once, also beside a history of
 * runs already delivered. Folder store only.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { fmtMs, fmtRatio, printTable } from "./print-table.mjs";

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

/** `n` bare loopback POSTs to `url`, `concurrency` at once, with the notifier's own client (fetch): each one's time and the rate. */
async function barePosts(url, n, concurrency = 1) {
  const times = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const t = performance.now();
        const res = await fetch(url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
        await res.arrayBuffer();
        times.push(performance.now() - t);
      }
    }),
  );
  return { times, perSecond: n / ((performance.now() - t0) / 1000) };
}

/** A ratio as the other rows print it: ×N.NN, or two significant digits below 1. */
function ratio(r) {
  return r >= 1 || !Number.isFinite(r) ? fmtRatio(r) : `×${r.toPrecision(2)}`;
}

/** Measure; returns the rows' figures for the targets table. */
export async function benchNotify({ root, workDir, quick }) {
  const lib = await import(join(root, "dist", "index.js"));
  const { folderRunStore } = await import(join(root, "dist", "home", "folder-run-store.js"));
  const { addWebhook } = await import(join(root, "dist", "gate", "configure-webhooks.js"));
  const { startNotifier } = await import(join(root, "dist", "gate", "deliver-notifications.js"));
  const samples = quick ? 50 : 200;
  const backlog = quick ? 200 : 1000;
  const history = quick ? 200 : 1000;

  // Floor: the decision's own write (lock, append, fsync), in a home with no webhook: nothing is enqueued or sent.
  const bareHome = lib.openGateHome(join(workDir, "write-floor-home"), { create: true });
  const bareStore = folderRunStore(bareHome);
  const bareRef = join(workDir, "write-floor-run.json");
  await bareStore.create(bareRef, [created(bareHome)], new Date());
  const writes = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await bareStore.update(bareRef, () => ({ events: [stop(i)], result: undefined }));
    writes.push(performance.now() - t0);
  }
  await bareStore.close();

  // Latency: one decision at a time, timed from before its write (decision) and from its write's end (event) to its arrival.
  const home = lib.openGateHome(join(workDir, "latency-home"), { create: true });
  const store = folderRunStore(home);
  const r = await receiver();
  await addWebhook(store, { url: r.url, events: "stop.raised" });
  const ref = join(workDir, "latency-run.json");
  await store.create(ref, [created(home)], new Date());
  const notifier = startNotifier({ store, origin: "http://localhost:7420" });
  const decisions = [];
  const events = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await store.update(ref, () => ({ events: [stop(i)], result: undefined }));
    const t1 = performance.now();
    const arrived = await r.reach(i + 1);
    decisions.push(arrived - t0);
    events.push(arrived - t1);
  }
  await notifier.close();
  await store.close();
  // Floor: a bare loopback POST to the same receiver, one at a time.
  const floor = await barePosts(r.url, samples);
  await r.close();

  // Throughput: a backlog across 10 runs, waiting before any server starts; delivered from a cold start. Then the same
  // beside a history of runs whose notifications were all delivered (the pending index keeps them out of every look).
  const throughput = async (name, historyRuns) => {
    const h = lib.openGateHome(join(workDir, `${name}-home`), { create: true });
    const st = folderRunStore(h);
    const rr = await receiver();
    await addWebhook(st, { url: rr.url, events: "stop.raised" });
    for (let run = 0; run < historyRuns; run++) {
      const ref2 = join(workDir, `${name}-history-${run}.json`);
      await st.create(ref2, [created(h)], new Date());
      await st.update(ref2, () => ({ events: [stop(0)], result: undefined }));
    }
    if (historyRuns > 0) {
      const drain = startNotifier({ store: st, origin: "http://localhost:7420", concurrency: 8 });
      await rr.reach(historyRuns);
      await drain.close();
    }
    for (let run = 0; run < 10; run++) {
      const ref2 = join(workDir, `${name}-${run}.json`);
      await st.create(ref2, [created(h)], new Date());
      for (let b = 0; b < backlog / 10 / 10; b++)
        await st.update(ref2, () => ({ events: Array.from({ length: 10 }, (_, i) => stop(b * 10 + i)), result: undefined }));
    }
    const before = rr.count();
    const t0 = performance.now();
    const n2 = startNotifier({ store: st, origin: "http://localhost:7420", concurrency: 8 });
    await rr.reach(before + backlog);
    const seconds = (performance.now() - t0) / 1000;
    await n2.close();
    await st.close();
    // Floor: as many bare POSTs to the same receiver, 8 at once (the deliverer's concurrency; one run's are one at a time).
    const postFloor = await barePosts(rr.url, backlog, 8);
    await rr.close();
    return { perSecond: backlog / seconds, floorPerSecond: postFloor.perSecond };
  };
  const clean = await throughput("throughput", 0);
  const withHistory = await throughput("history", history);

  const p = (xs, q) => percentile(xs, q);
  const figures = {
    p50: p(decisions, 50),
    p99: p(decisions, 99),
    eventP50: p(events, 50),
    eventP99: p(events, 99),
    floorP50: p(floor.times, 50),
    floorP99: p(floor.times, 99),
    writeP50: p(writes, 50),
    writeP99: p(writes, 99),
    perSecond: clean.perSecond,
    floorPerSecond: clean.floorPerSecond,
    historyPerSecond: withHistory.perSecond,
    historyFloorPerSecond: withHistory.floorPerSecond,
  };
  const f = figures;
  printTable(
    `Notifications: event → webhook receiver on loopback, folder store (${samples} one at a time)`,
    ["measure", "p50", "p99", "p50 vs bare POST", "p99 vs bare POST"],
    [
      [
        "decision returned (event and outbox entry written) → receiver",
        fmtMs(f.eventP50),
        fmtMs(f.eventP99),
        ratio(f.eventP50 / f.floorP50),
        ratio(f.eventP99 / f.floorP99),
      ],
      ["decision (its write included) → receiver", fmtMs(f.p50), fmtMs(f.p99), ratio(f.p50 / f.floorP50), ratio(f.p99 / f.floorP99)],
      [
        "floor: the decision's write alone (no webhook)",
        fmtMs(f.writeP50),
        fmtMs(f.writeP99),
        ratio(f.writeP50 / f.floorP50),
        ratio(f.writeP99 / f.floorP99),
      ],
      ["floor: a bare loopback POST to the same receiver (fetch)", fmtMs(f.floorP50), fmtMs(f.floorP99), "×1.00", "×1.00"],
    ],
    [
      "decision returned: from the moment store.update resolved (the event and its outbox entry are on disk; the delivery may already be under way); the deliverer is woken by the store's ring, signs (Standard Webhooks) and POSTs with fetch.",
    ],
  );
  printTable(
    `Notifications: the outbox's throughput, ${backlog} waiting across 10 runs, one webhook, delivered from a cold start (8 at once)`,
    ["measure", "deliveries/s", "vs bare POSTs"],
    [
      ["outbox backlog", `${f.perSecond.toFixed(0)}/s`, ratio(f.perSecond / f.floorPerSecond)],
      [
        `the same beside ${history} runs already delivered (history)`,
        `${f.historyPerSecond.toFixed(0)}/s`,
        ratio(f.historyPerSecond / f.historyFloorPerSecond),
      ],
      [`floor: ${backlog} bare POSTs to the same receiver, 8 at once`, `${f.floorPerSecond.toFixed(0)}/s`, "×1.00"],
    ],
    [
      "A run's notifications reach a webhook one at a time, in order (the next is sent once the previous is answered); each delivery is one fetch and a batched removal from the run's outbox file.",
      "history: the pending index (notify/pending/) keeps runs with nothing waiting out of every look at the outbox, so their number does not slow delivery.",
    ],
  );
  return figures;
}

/** The targets table's rows. */
export function notifyTargets(f) {
  if (!f) return [];
  return [
    ["notification latency decision → receiver p99 (loopback, folder store)", fmtMs(f.p99), "< 500 ms", f.p99 < 500],
    ["outbox throughput (folder store, 10 runs, one webhook)", `${f.perSecond.toFixed(0)}/s`, "≥ 100/s", f.perSecond >= 100],
    [
      "outbox throughput beside a delivered history vs without it (each against its bare POSTs)",
      ratio(f.historyPerSecond / f.historyFloorPerSecond / (f.perSecond / f.floorPerSecond)),
      "≥ ×0.5",
      f.historyPerSecond / f.historyFloorPerSecond / (f.perSecond / f.floorPerSecond) >= 0.5,
    ],
  ];
}
