import { copyFileSync, existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { raiseStop } from "../gate/hard-stops.js";
import { initRun } from "../gate/init-run.js";
import { makeRunTempDir, pinForTest, RUN_EXAMPLE_SUITE, removeGateRuns, testHome } from "../test-support/run-fixture.js";
import { folderRunStore } from "./folder-run-store.js";
import { readCheckpoint, withCheckpointLock } from "./run-checkpoints.js";
import { readRun } from "./run-ledger.js";
import { pendingStopRequests } from "./stop-requests.js";

afterAll(removeGateRuns);

async function newRun(file: string) {
  const home = testHome();
  await pinForTest(RUN_EXAMPLE_SUITE, false, home);
  return initRun({ run: file, store: folderRunStore(home), suiteRoot: RUN_EXAMPLE_SUITE, planners: ["MD-29"], actor: "test" });
}

describe("the run's lock when the run file is swapped while a writer waits", () => {
  it("follows a run file replaced by another run's to that run's lock, and writes only the run it read under its lock", async () => {
    const dir = makeRunTempDir();
    const a = path.join(dir, "a.json");
    const b = path.join(dir, "b.json");
    const runA = await newRun(a);
    const runB = await newRun(b);
    const home = testHome();
    const idA = runA.state.run_id;
    const idB = runB.state.run_id;
    let release = () => {};
    let entered = () => {};
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    // A write of run A holds its lock; a stop of the file a.json (run A) queues behind it.
    const holder = withCheckpointLock(home, idA, () => {
      entered();
      return new Promise<void>((r) => {
        release = r;
      });
    });
    await inside;
    const stop = raiseStop({ store: folderRunStore(home), run: a, reason: "halt", actor: "alice" });
    const queue = path.join(home.dir, "runs", `${idA}.queue`);
    for (let i = 0; i < 400 && readdirSync(queue).filter((n) => n.startsWith("t-")).length < 2; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(readdirSync(queue).filter((n) => n.startsWith("t-"))).toHaveLength(2);
    // Meanwhile the agent puts run B's file where a.json was.
    copyFileSync(b, a);
    release();
    await holder;
    const written = await stop;
    // The stop read run B under A's lock, let go, took B's lock and landed in B: A's checkpoint never moved.
    expect(written.state.run_id).toBe(idB);
    expect(readCheckpoint(home, idA)?.seq).toBe(runA.file.revision);
    expect(readCheckpoint(home, idB)?.seq).toBe(runB.file.revision + 1);
    expect(readRun(a, home).state.stops.map((s) => s.reason)).toEqual(["halt"]);
    // Run A, which a.json held when the stop was asked for, is stopped too: its stop stands in the home.
    expect(pendingStopRequests(home, idA).map((r) => r.reason)).toEqual(["halt"]);
    expect(existsSync(`${a}.lock`)).toBe(false);
  });
});
