/**
 * A stop lost: the run's writer W lists the pending stops (S1), then writes
 * them into the chain. A second stop S2 with the same actor, reason, workflow
 * and note (a double submit, a second person's tool acting as the same actor,
 * the agent's own `twinlock stop`) takes its time (`at`) before W's write and
 * lands its file in the gate home after W's listing (its fsyncs take that
 * long). W removes S1 only; the next writer finds S2 pending and, since the
 * checkpoint's last write holds a `stop_raised` of the same content dated no
 * earlier than S2, takes S2 for already written (the dedup meant for a writer
 * that died between writing and removing) and removes it unwritten. The chain
 * holds one stop where two were raised: lifting the one lifts both.
 */
import { afterAll, describe, expect, it } from "vitest";
import { readRun } from "../../src/home/run-ledger.js";
import { recordStopRequest } from "../../src/home/stop-requests.js";
import { driveTo, homeOf, makeGateRun, removeGateRuns, storeOf } from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

describe("two stops of the same content, the second landing while the first is written into the chain", () => {
  it("are both written into the chain", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const stop = { runId, reason: "halt", workflow: null, note: null, actor: "person" };
    recordStopRequest(home, { ...stop, at: new Date() });
    // S2's `twinlock stop` takes its time now; its file is still being written (fsynced) when W lists the pending stops.
    const s2At = new Date();
    // W: the run's next writer (any decision; here one that decides nothing), writing S1 into the chain.
    await storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }));
    // S2's file lands.
    recordStopRequest(home, { ...stop, at: s2At });
    // The run's next writer.
    await storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }));
    const run = readRun(g.runFile, home);
    expect(run.file.events.filter((e) => e.type === "stop_raised").length).toBe(2);
    expect(run.state.stops.filter((s) => s.resolved_at === null).length).toBe(2);
  });
});
