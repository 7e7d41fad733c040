/**
 * The attack: the agent writes the run folders of two runs of one gate home
 * (SECURITY.md, deployment 1: one agent-writable folder per run). Run A is
 * consented and waits for admission. The agent copies run B's file over A's
 * run file; the person runs `twinlock stop A/run.json` and is told
 * "recorded !STOP:halt on the whole run" (no run named). The stop was read,
 * recorded and written for the run the file named then: B. The agent copies
 * A's bytes back (at A's checkpoint, so every check passes) and admits A after
 * the person's stop of that run file returned. The gate home knows which run
 * lives at that path (A's checkpoint records its run file) but the stop does
 * not look. Likewise a run file the agent leaves unreadable while the person
 * stops it: the stop is refused ("not valid JSON … restore it from backup")
 * and nothing is recorded; the agent restores the bytes and admits.
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { raiseStop } from "../../src/gate/hard-stops.js";
import { admitStep, driveTo, makeGateRun, removeGateRuns, storeOf } from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

describe("a stop of a run file the agent swapped for another run's just before", () => {
  it("stops the run that lives at that run file: its admission is refused", async () => {
    const a = makeGateRun();
    const b = makeGateRun();
    await driveTo(a, "dry_run_ready");
    await driveTo(b, "investigating");
    const aBytes = readFileSync(a.runFile);
    copyFileSync(b.runFile, a.runFile);
    await raiseStop({ store: storeOf(a), run: a.runFile, reason: "halt", actor: "person" });
    writeFileSync(a.runFile, aBytes);
    const admission = await admitStep(a);
    expect(admission.admitted).toBe(false);
  });

  it("stops the run that lives at a run file the agent made unreadable for the moment: its admission is refused", async () => {
    const a = makeGateRun();
    await driveTo(a, "dry_run_ready");
    const aBytes = readFileSync(a.runFile);
    writeFileSync(a.runFile, "{");
    await raiseStop({ store: storeOf(a), run: a.runFile, reason: "halt", actor: "person" }).catch(() => undefined);
    writeFileSync(a.runFile, aBytes);
    const admission = await admitStep(a);
    expect(admission.admitted).toBe(false);
  });
});
