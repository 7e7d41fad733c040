/**
 * Run by the bench under `twinlock exec` (so its calls come from a bound,
 * admitted session, as an in-process agent's tool calls do): times, call by
 * call in this one process, the executor side the adapters share
 * (`executorGate(...).judge`, over `judgeToolCall`) on a write inside the
 * admitted action's target, `judgeToolCall` itself on the same call, a write
 * outside the targets (denied), and a bare function call; beside them two of
 * the bench's floors, `node -e ''` and `sha256sum` on the checkout's files;
 * writes p50/p99 (ms), the floors' medians and the checkout's shape to OUT as JSON. Every timed allowed call must be
 * allowed and every denied one denied, or it writes the reason instead.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { timeCommand } from "./measure.mjs";

const [root, out, callsText] = process.argv.slice(2);
const calls = Number(callsText);
const home = process.env.TWINLOCK_HOME;
const checkout = process.env.TWINLOCK_HANDOFF;
const { executorGate } = await import(join(root, "dist", "adapters", "executor-gate.js"));
const { judgeToolCall } = await import(join(root, "dist", "hook", "judge-tool-call.js"));

try {
  // The checkout must be a handoff's real shape: the four SPEC §4 records (and the report), as a planner writes them.
  const files = readdirSync(checkout, { recursive: true }).filter((f) => statSync(join(checkout, f)).isFile());
  for (const record of ["evidence_index.json", "finding_register.json", "action_plan.json", "acceptance_criteria.json"])
    if (!files.includes(record)) throw new Error(`the checkout holds no ${record}`);
  const bytes = files.reduce((n, f) => n + statSync(join(checkout, f)).size, 0);
  const plan = JSON.parse(readFileSync(join(checkout, "action_plan.json"), "utf8"));
  const target = join(process.cwd(), String(plan.actions[0].target).replace(/:[0-9-]+$/, ""));
  const outside = join(process.cwd(), "not-a-target.txt");
  const gate = executorGate({ home, tools: { write_file: { writes: (i) => i.path } } });
  const call = (p) => ({ kind: "write", tool: "write_file", paths: [p], cwd: process.cwd() });
  const env = { ...process.env };
  let sink = 0;
  const bare = (input) => {
    sink += input.path.length;
    return { allow: true };
  };
  const rows = {
    bare: () => bare({ path: target }),
    gate: () => gate.judge("write_file", { path: target }),
    judge: () => judgeToolCall({ call: call(target), env, home, bindReads: true }),
    denied: () => gate.judge("write_file", { path: outside }),
  };
  for (const [name, fn] of Object.entries(rows)) {
    const j = fn();
    if (j.allow !== (name !== "denied")) throw new Error(`the ${name} call was ${j.allow ? "allowed" : `denied: ${j.reason}`}`);
  }
  const times = Object.fromEntries(Object.keys(rows).map((k) => [k, []]));
  for (let i = 0; i < 50; i++) for (const fn of Object.values(rows)) fn();
  // Interleaved call by call, so the machine's drift (shared cores) falls on every row alike.
  for (let i = 0; i < calls; i++)
    for (const [name, fn] of Object.entries(rows)) {
      const t = process.hrtime.bigint();
      fn();
      times[name].push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  const summary = Object.fromEntries(
    Object.entries(times).map(([k, xs]) => {
      xs.sort((a, b) => a - b);
      return [k, { p50: pct(xs, 50), p99: pct(xs, 99) }];
    }),
  );
  const runs = Math.max(5, Math.min(21, Math.round(calls / 200)));
  const floors = {
    node: timeCommand(process.execPath, ["-e", ""], { runs, warmup: 2 }).median,
    sha256sum: timeCommand(
      "sha256sum",
      files.map((f) => join(checkout, f)),
      { runs, warmup: 2 },
    ).median,
  };
  writeFileSync(out, JSON.stringify({ ok: true, calls, checkout: { files: files.length, bytes }, floors, ...summary, sink }));
} catch (error) {
  writeFileSync(out, JSON.stringify({ ok: false, reason: String(error?.message ?? error) }));
}
