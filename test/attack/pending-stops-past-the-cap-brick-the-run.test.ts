/**
 * The attack: the agent holds its run's lock with a writer it SIGSTOPs, then
 * raises 1,001 stops on the run (anyone may raise one; each `twinlock stop`
 * can be killed once its request is in the gate home). Over MAX_PENDING (1,000)
 * pending stops, every read of the run is refused as a damaged gate home; the
 * run's next writer, once the agent's writer is gone, cannot write them into
 * the chain either (it lists them through the same cap), so the run stays
 * unreadable for good: no pair-status, stop, resolve-stop or log of it works
 * until a person edits the gate home by hand.
 */
import { afterAll, describe, expect, it } from "vitest";
import { raiseStop } from "../../src/gate/hard-stops.js";
import { withCheckpointLock } from "../../src/home/run-checkpoints.js";
import { readRun } from "../../src/home/run-ledger.js";
import { recordStopRequest } from "../../src/home/stop-requests.js";
import { driveTo, homeOf, makeGateRun, removeGateRuns, storeOf } from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

const message = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (error: Error) => error.message,
  );

describe("stops raised while the agent's stopped writer holds the run's lock", () => {
  it("all stand, and once the writer is gone the next writer writes them all into the chain", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    let release = () => {};
    let entered = () => {};
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const holder = withCheckpointLock(home, runId, () => {
      entered();
      return new Promise<void>((r) => {
        release = r;
      });
    });
    await inside;
    // What 1,000 `twinlock stop` calls leave, each killed by the agent once it recorded its request (as raiseStop does first)…
    for (let i = 0; i < 1000; i++)
      recordStopRequest(home, { runId, reason: "halt", workflow: null, note: null, actor: "agent", at: new Date() });
    // …and one more, left to run: the lock is held, so it stays pending.
    const raised = [await message(raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "agent", lockWaitMs: 1 }))];
    release();
    await holder;
    const outcome = {
      read: await message(storeOf(g).read(g.runFile)),
      nextWrite: await message(storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }))),
    };
    expect({ stop: raised[0], ...outcome }).toEqual({ stop: "ok", read: "ok", nextWrite: "ok" });
  });
});
