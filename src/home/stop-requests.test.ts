import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { raiseStop } from "../gate/hard-stops.js";
import { admitStep, driveTo, homeOf, makeGateRun, removeGateRuns, storeOf } from "../test-support/run-fixture.js";
import { readRun } from "./run-ledger.js";
import { DAMAGED_STOP_REASON, pendingStopRequests, recordStopRequest } from "./stop-requests.js";

afterAll(removeGateRuns);

describe("a stop request in the gate home", () => {
  it("is refused, recording nothing, when its note is over the 65,536 characters the run's chain takes, in one line saying so", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const note = "n".repeat(64 * 1024 + 1);
    expect(() => recordStopRequest(home, { runId, reason: "halt", workflow: null, note, actor: "person", at: new Date() })).toThrow(
      /^the stop is not recorded: its note is 65537 characters, over the 65536 a stop's note may hold \(as the run's chain takes\); shorten it or link to a document$/,
    );
    expect(pendingStopRequests(home, runId)).toEqual([]);
  });

  it("that cannot be read stands as a stop of the whole run: reads and writers go on, and the next writer puts it in the chain", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const dir = path.join(home.dir, "runs", `${runId}.stops`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${String(Date.now()).padStart(13, "0")}-0123456789abcdef.json`), "{ half a request");
    const read = await storeOf(g).read(g.runFile);
    expect(read.state.stops.map((s) => [s.reason, s.workflow, s.resolved_at])).toEqual([[DAMAGED_STOP_REASON, null, null]]);
    expect(read.state.stops[0]?.note).toMatch(/is not JSON; it stands as a stop of the whole run, since the stop it held cannot be known/);
    expect((await admitStep(g)).admitted).toBe(false);
    await storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }));
    const run = readRun(g.runFile, home);
    expect(run.file.events.filter((e) => e.type === "stop_raised").map((e) => [e.actor, e.data.reason])).toEqual([
      ["twinlock (gate home)", DAMAGED_STOP_REASON],
    ]);
    expect(readdirSync(dir)).toEqual([]);
    // A stop raised after it is recorded and written as any other.
    const raised = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "person" });
    expect(raised.state.stops.map((s) => s.reason)).toEqual([DAMAGED_STOP_REASON, "halt"]);
  });
});
