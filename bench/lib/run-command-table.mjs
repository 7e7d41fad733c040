/**
 * Times every row of the command table. Each timed sequence starts from a
 * fresh folder (new run file, own copy of the handoff), so a command that
 * changes state always meets the state the flow gives it; the first
 * sequence is an untimed warm-up.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { COMMANDS } from "../commands.mjs";
import { writeHandoff } from "./handoff-fixture.mjs";
import { median, runOnce } from "./measure.mjs";

const UNKNOWN = /unknown command/i;

/**
 * Run `table` `runs` times (+1 warm-up) with `node cli …` in folders under
 * `workDir`; return per row `{name, argv, status: "ok"|"n/a"|"failed",
 * median, detail}`.
 */
export function runCommandTable(table, { cli, workDir, base, runs }) {
  const results = new Map(table.map((row) => [row.name, { name: row.name, times: [], status: "ok", detail: "", argv: [] }]));
  // Ask the CLI which commands it has (`twinlock CMD --help`), so a row whose
  // prerequisite is missing is told apart from a row whose own command is.
  const known = new Map();
  for (const row of table) {
    const command = row.args({ ...base, handoff: "HANDOFF", run: "RUN" })[0];
    if (command.startsWith("-")) continue;
    if (!known.has(command)) {
      const r = runOnce(process.execPath, [cli, command, "--help"]);
      known.set(command, !(r.status !== 0 && UNKNOWN.test(`${r.stdout}\n${r.stderr}`)));
    }
    if (!known.get(command)) Object.assign(results.get(row.name), { status: "n/a", detail: "not in the CLI yet" });
  }
  for (let seq = 0; seq <= runs; seq++) {
    const dir = join(workDir, `seq-${seq}`);
    mkdirSync(dir, { recursive: true });
    const ctx = { ...base, handoff: join(dir, "handoff"), run: join(dir, "run.json"), handoffHash: undefined };
    writeHandoff(ctx.handoff, ctx.planner);
    const succeeded = new Set();
    for (const row of table) {
      const res = results.get(row.name);
      if (res.status === "n/a" || res.status === "failed") continue;
      const missing = (row.needs ?? []).filter((n) => !succeeded.has(n));
      if (missing.length > 0) {
        res.status = "n/a";
        res.detail = `needs ${missing.join(", ")}`;
        continue;
      }
      const argv = row.args(ctx);
      res.argv = argv;
      const r = runOnce(process.execPath, [cli, ...argv], { cwd: dir });
      const output = `${r.stdout}\n${r.stderr}`;
      if (r.status !== (row.expect ?? 0)) {
        if (UNKNOWN.test(output)) {
          res.status = "n/a";
          res.detail = "not in the CLI yet";
        } else {
          res.status = "failed";
          res.detail = `exit ${r.status ?? r.signal}: ${firstLine(r.stderr) || firstLine(r.stdout)}`;
        }
        continue;
      }
      succeeded.add(row.name);
      for (const [key, pattern] of Object.entries(row.capture ?? {})) {
        const m = pattern.exec(r.stdout);
        if (m) ctx[key] = m[0];
      }
      if (seq > 0) res.times.push(r.ms);
    }
  }
  return [...results.values()].map((r) => ({ ...r, median: r.status === "ok" && r.times.length > 0 ? median(r.times) : undefined }));
}

function firstLine(text) {
  return (text ?? "").trim().split("\n")[0]?.slice(0, 160) ?? "";
}

/**
 * The command rows up to the execution consent, then `twinlock exec` admitting the run and running the node script
 * `script` with `args(ctx)` inside the bound session. A node script is no agent tool exec can identify: it runs held
 * by the hook alone (`--hook-only`), which is what the timing children measure.
 */
export function rowsThenExec(script, args) {
  const rows = COMMANDS.slice(0, COMMANDS.findIndex((c) => c.name === "consent-pair-execution") + 1);
  rows.push({
    name: "exec",
    needs: ["consent-pair-execution"],
    args: (ctx) => ["exec", ctx.run, ctx.executor, "--hook-only", "--", process.execPath, script, ...args(ctx)],
  });
  return rows;
}
