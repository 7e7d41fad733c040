import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { raiseStop } from "../gate/hard-stops.js";
import { admitStep, driveTo, homeOf, makeGateRun, removeGateRuns, storeOf } from "../test-support/run-fixture.js";
import { readCheckpoint, withCheckpointLock } from "./run-checkpoints.js";
import { readRun } from "./run-ledger.js";
import { DAMAGED_STOP_REASON, MAX_PENDING_STOPS, pendingStopRequests, recordStopRequest } from "./stop-requests.js";

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

  it("past the cap a read shows the oldest 1,000, and the next writer writes every one into the chain, 1,000 a write", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const dir = path.join(home.dir, "runs", `${runId}.stops`);
    mkdirSync(dir, { recursive: true });
    // What many stops racing past the cap leave (each counted the requests before any of the others landed).
    const at = Date.now();
    for (let i = 0; i < MAX_PENDING_STOPS + 500; i++) {
      const id = `${String(at + i).padStart(13, "0")}-${i.toString(16).padStart(16, "0")}`;
      const request = { format: "twinlock-stop-request/1", id, run_id: runId, reason: "halt", workflow: null, note: null, actor: "agent" };
      writeFileSync(path.join(dir, `${id}.json`), JSON.stringify({ ...request, at: new Date(at + i).toISOString() }));
    }
    expect((await storeOf(g).read(g.runFile)).state.stops).toHaveLength(MAX_PENDING_STOPS);
    const before = readRun(g.runFile, home).file.revision;
    await storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }));
    const run = readRun(g.runFile, home);
    expect(run.file.revision - before).toBe(MAX_PENDING_STOPS + 500);
    expect(readCheckpoint(home, runId)?.last_write.events).toHaveLength(500);
    expect(run.state.stops.filter((s) => s.resolved_at === null)).toHaveLength(MAX_PENDING_STOPS + 500);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("is not recorded past the cap: the stop says the run stands stopped by the pending ones and that it was not recorded", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const dir = path.join(home.dir, "runs", `${runId}.stops`);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < MAX_PENDING_STOPS; i++) {
      const id = `${String(Date.now()).padStart(13, "0")}-${i.toString(16).padStart(16, "0")}`;
      const request = { format: "twinlock-stop-request/1", id, run_id: runId, reason: "halt", workflow: null, note: null, actor: "agent" };
      writeFileSync(path.join(dir, `${id}.json`), JSON.stringify({ ...request, at: new Date().toISOString() }));
    }
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
    const raised = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "mine", actor: "person", lockWaitMs: 1 });
    release();
    await holder;
    expect(raised.notRecorded).toMatch(
      /^the stop is not recorded: 1000 stops of run run_[0-9a-f]{16} are pending in the gate home already \(at most 1000\), so the run stands stopped/,
    );
    expect(raised.state.stops).toHaveLength(MAX_PENDING_STOPS);
    expect(readdirSync(dir)).toHaveLength(MAX_PENDING_STOPS);
    // With the lock free, the stop past the cap is written into the chain itself, after the pending ones.
    const written = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "mine", actor: "person" });
    expect(written.notRecorded).toBeUndefined();
    expect(written.stop).toBe(written.file.revision);
    expect(written.file.events.at(-1)).toMatchObject({ type: "stop_raised", data: { reason: "mine" } });
    expect(readdirSync(dir)).toEqual([]);
  });
});
