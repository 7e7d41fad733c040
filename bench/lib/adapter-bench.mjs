/**
 * The adapters row (issue 28): what the gate costs an in-process agent per
 * tool call. A run of the realistic 257-prompt suite is driven through the
 * CLI to consent (the command section's rows, on its ready handoff: the four
 * SPEC §4 records and a report, the shape a planner writes), then `twinlock
 * exec` admits it, checks out the approved bytes, binds the session and runs
 * bench/lib/adapter-timing-child.mjs below it, which times the adapters'
 * shared judgement call by call in its own process. The figures are ratios
 * against floors measured in the same run: `node -e ''` and `sha256sum` of
 * the checkout (in the child), and one request to a bare node:http server
 * (p50 of sequential keep-alive requests, here).
 */

import { readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fmtMs, fmtRatio, printTable } from "./print-table.mjs";
import { rowsThenExec, runCommandTable } from "./run-command-table.mjs";
import { startServerProcess } from "./server-process.mjs";

/** Time the adapters' judgement on an admitted, bound run of `signed`; prints its table and returns the figures (undefined when not measured). */
export async function benchAdapters({ root, cli, signed, pair, workDir, quick }) {
  const calls = quick ? 2000 : 10000;
  const out = "adapters.json";
  const rows = rowsThenExec(join(root, "bench", "lib", "adapter-timing-child.mjs"), (ctx) => [root, `${ctx.run}.${out}`, String(calls)]);
  const exec = runCommandTable(rows, {
    cli,
    workDir,
    runs: 1,
    base: { suite: signed.suite, key: signed.key, freezeKey: signed.freezeKey, planner: pair.planner, executor: pair.executor },
  }).find((r) => r.name === "exec");
  let t;
  try {
    t = JSON.parse(readFileSync(join(workDir, "seq-1", `run.json.${out}`), "utf8"));
  } catch {
    t = { ok: false, reason: `exec ${exec?.status ?? "missing"}: ${exec?.detail ?? ""}` };
  }
  if (!t.ok) {
    process.stdout.write(`\nAdapters: not measured (${t.reason})\n`);
    return undefined;
  }
  const httpP50 = await bareHttpP50(quick ? 2000 : 5000);
  const vs = (ms) => [fine(ms / t.floors.node), fine(ms / httpP50), fine(ms / t.floors.sha256sum)];
  const row = (name, r) => [name, `${r.p50.toFixed(3)} ms`, `${r.p99.toFixed(3)} ms`, ...vs(r.p50)];
  printTable(
    `In-process adapters, per tool call (realistic 257-prompt suite, ${pair.planner} → ${pair.executor}, admitted and bound by twinlock exec; target ≤ 2 ms p50)`,
    ["call", "p50", "p99", "p50 vs node -e ''", "p50 vs node:http request", "p50 vs sha256sum of the checkout"],
    [
      row("executorGate().judge: write in the target (allowed)", t.gate),
      row("judgeToolCall: the same call", t.judge),
      row("executorGate().judge: write outside the targets (denied)", t.denied),
      row("bare function call", t.bare),
    ],
    [
      `${t.calls} calls of each, interleaved call by call after 50 warm-ups, in the process exec started (each call re-reads the binding and the checkpoint and re-hashes the checkout).`,
      `checkout: ${t.checkout.files} files, ${t.checkout.bytes} bytes (the four SPEC §4 records and a report, as examples/handoff: 5 files, 2.4 KiB). Floors in this run: node -e '' ${fmtMs(t.floors.node)}, a bare node:http request p50 ${fmtMs(httpP50)}, sha256sum of the checkout ${fmtMs(t.floors.sha256sum)}.`,
    ],
  );
  return { ...t, httpP50 };
}

/** A ratio to two significant digits: a call costs a small fraction of a process start. */
function fine(r) {
  return r >= 1 ? fmtRatio(r) : `×${r.toPrecision(2)}`;
}

/** The targets of this row: the shared judgement's p50, absolute (issue 28) and against node -e ''. */
export function adapterTargets(a) {
  if (!a) return [];
  return [
    ["adapters: judged tool call p50 (ms)", `${a.gate.p50.toFixed(3)} ms`, "≤ 2 ms", a.gate.p50 <= 2],
    ["adapters: judged tool call p50 vs node -e ''", fine(a.gate.p50 / a.floors.node), "≤ ×0.05", a.gate.p50 / a.floors.node <= 0.05],
  ];
}

/** p50 of `n` sequential keep-alive GETs to the bench's bare node:http floor server (after 200 warm-ups). */
async function bareHttpP50(n) {
  const server = await startServerProcess([fileURLToPath(new URL("floor-server.mjs", import.meta.url)), "http"]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise((resolve, reject) => {
      const req = http.get(`${server.url}/`, { agent }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
    });
  try {
    for (let i = 0; i < 200; i++) await get();
    const times = [];
    for (let i = 0; i < n; i++) {
      const t = process.hrtime.bigint();
      await get();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  } finally {
    agent.destroy();
    await server.stop();
  }
}
