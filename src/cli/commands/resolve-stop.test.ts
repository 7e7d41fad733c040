import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import type { RunFile } from "../../run/run-schema.js";
import { runCli } from "../../test-support/run-cli.js";
import { driveTo, type GateRun, makeGateRun, PLANNER, removeGateRuns } from "../../test-support/run-fixture.js";

afterAll(removeGateRuns);

const stopsOf = (g: GateRun) => (JSON.parse(readFileSync(g.runFile, "utf8")) as RunFile).state.stops;
const standing = (g: GateRun) =>
  stopsOf(g)
    .filter((s) => s.resolved_at === null)
    .map((s) => s.seq);

/** A stop raised with the CLI; its number, as `stop` prints it. */
async function stop(g: GateRun, reason: string, workflow?: string): Promise<number> {
  const r = await runCli([
    "stop",
    g.runFile,
    "--home",
    g.home,
    "--reason",
    reason,
    ...(workflow ? ["--workflow", workflow] : []),
    "--json",
  ]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { stop: number }).stop;
}

const liftCli = (g: GateRun, ...args: string[]) => runCli(["resolve-stop", g.runFile, "--home", g.home, "--note", "fixed", ...args]);

describe("resolve-stop", () => {
  it("refuses to pick among several standing stops of the reason, listing each with its number, and lifts nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const runWide = await stop(g, "db-freeze");
    const onPair = await stop(g, "db-freeze", PLANNER);
    const r = await liftCli(g, "--reason", "db-freeze");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `twinlock: 2 stops !STOP:db-freeze stand: ${runWide} (!STOP:db-freeze on the whole run, raised by ${stopsOf(g)[0]?.raised_by}), ${onPair} (!STOP:db-freeze on ${PLANNER}, raised by ${stopsOf(g)[1]?.raised_by}); name the ones to lift by their numbers (one lift never lifts several unless each is named): pick with --stop ${runWide} (repeat --stop to lift several; each is named in the signed receipt)\n`,
    );
    expect(standing(g)).toEqual([runWide, onPair]);
  });

  it("lifts the run-wide stop alone when named, leaving the pair's stop of the same reason standing", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const runWide = await stop(g, "db-freeze");
    const onPair = await stop(g, "db-freeze", PLANNER);
    const r = await liftCli(g, "--reason", "db-freeze", "--stop", String(runWide));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^lifted !STOP:db-freeze \\(stop ${runWide}\\) by `));
    expect(standing(g)).toEqual([onPair]);
    // With one standing stop of the reason left, that one is the default.
    expect((await liftCli(g, "--reason", "db-freeze")).code).toBe(0);
    expect(standing(g)).toEqual([]);
    expect(stopsOf(g).map((s) => s.resolution_receipt?.stops)).toEqual([[runWide], [onPair]]);
  });

  it("lifts several stops in one receipt when each is named", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const a = await stop(g, "db-freeze");
    const b = await stop(g, "db-freeze", PLANNER);
    const r = await liftCli(g, "--reason", "db-freeze", "--stop", String(b), "--stop", String(a), "--json");
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { stops: number[] }).stops).toEqual([a, b]);
    expect(standing(g)).toEqual([]);
  });

  it("refuses a stop number that is not a standing stop of the reason, naming the standing ones, and a number that is not one", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const a = await stop(g, "db-freeze");
    const b = await stop(g, "flaky-ci");
    const other = await liftCli(g, "--reason", "db-freeze", "--stop", String(b));
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(new RegExp(`stop ${b} is not a standing !STOP:db-freeze; standing !STOP:db-freeze: ${a} \\(`));
    const bad = await liftCli(g, "--reason", "db-freeze", "--stop", "0");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--stop takes a stop's number \(its event number in twinlock log, from 1\), got "0"/);
    expect(standing(g)).toEqual([a, b]);
  });

  it("prints the stop's number when raising it, and the exact lift command", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const r = await runCli(["stop", g.runFile, "--home", g.home, "--reason", "db-freeze"]);
    const n = stopsOf(g)[0]?.seq;
    expect(r.stdout).toMatch(new RegExp(`as stop ${n}; .* until: twinlock resolve-stop \\S+ --reason db-freeze --stop ${n} --note TEXT`));
  });
});
