import { afterAll, describe, expect, it } from "vitest";
import { driveTo, homeOf, makeGateRun, removeGateRuns, storeOf } from "../test-support/run-fixture.js";
import { readRun } from "./run-ledger.js";
import { pendingStopRequests, recordStopRequest } from "./stop-requests.js";

afterAll(removeGateRuns);

// The stops a person asked for are written into the run's chain in the order they became visible in the gate home: a
// request asked for earlier but recorded later (its writer was slower) is never put before one already there, and every
// request visible when a writer takes the run's lock is in that writer's fold.
describe("the order of a run's pending stops", () => {
  it("is the order the requests became visible, not the order they were asked for", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const asked = Date.now();
    // Recorded first, asked for later; then one asked for a second earlier, recorded after it.
    const first = recordStopRequest(home, { runId, reason: "recorded-first", workflow: null, note: null, actor: "p", at: new Date(asked) });
    const second = recordStopRequest(home, {
      runId,
      reason: "recorded-second",
      workflow: null,
      note: null,
      actor: "p",
      at: new Date(asked - 1000),
    });
    expect(pendingStopRequests(home, runId).map((r) => r.reason)).toEqual(["recorded-first", "recorded-second"]);
    expect(first.id < second.id).toBe(true);
    // The time a person asked stays the stop's own.
    expect(pendingStopRequests(home, runId).map((r) => r.at)).toEqual([
      new Date(asked).toISOString(),
      new Date(asked - 1000).toISOString(),
    ]);
  });

  it("puts a request visible after a fold after that fold's, so the chain's order is the requests' ID order", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const asked = Date.now();
    recordStopRequest(home, { runId, reason: "folded-first", workflow: null, note: null, actor: "p", at: new Date(asked) });
    // A writer takes the lock: the request visible now is in its fold.
    await storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }));
    expect(pendingStopRequests(home, runId)).toEqual([]);
    // Asked for before the first, visible only after its fold.
    recordStopRequest(home, { runId, reason: "asked-earlier", workflow: null, note: null, actor: "p", at: new Date(asked - 1000) });
    await storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }));
    const stops = readRun(g.runFile, home).file.events.filter((e) => e.type === "stop_raised");
    expect(stops.map((e) => e.data.reason)).toEqual(["folded-first", "asked-earlier"]);
    const ids = stops.map((e) => String(e.data.request));
    expect(ids).toEqual([...ids].sort());
  });
});
