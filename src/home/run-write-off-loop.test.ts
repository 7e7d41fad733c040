import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { IntegrityError } from "../errors/errors.js";
import type { RunEvent, RunFile } from "../run/run-schema.js";
import type { EventDraft } from "../store/run-file.js";
import { countTurns } from "../test-support/count-turns.js";
import { driveTo, freeze, makeGateRun, removeGateRuns, storeOf } from "../test-support/run-fixture.js";

afterAll(removeGateRuns);

/** Heavy sizes (the attack as measured) with TWINLOCK_SOAK=1; light ones by default. */
const SOAK = process.env.TWINLOCK_SOAK === "1";
const MANIFEST_FILES = SOAK ? 20_000 : 1_000;
/**
 * The agent's rewritten run file, in MiB: 20 of the reader's 256 KiB slices by default (on the thread the loop turns
 * between slices only, so 20 times; off it, over 100,000 times, measured), the 15 MiB of the attack with TWINLOCK_SOAK=1.
 */
const FORGED_MIB = SOAK ? 15 : 5;

const stop = (reason: string): EventDraft[] => [{ type: "stop_raised", actor: "a reviewer", data: { reason, workflow: null, note: null } }];

/** Turns of the event loop while `work` runs, and what it gave (or threw). */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; outcome: { value: T } | { error: unknown } }> {
  const stopCounting = countTurns();
  try {
    const value = await work();
    return { turns: stopCounting(), outcome: { value } };
  } catch (error) {
    return { turns: stopCounting(), outcome: { error } };
  } finally {
    stopCounting();
  }
}

/*
 * The bar is 100 loop turns: work held on the thread lets through none (0 measured, old code), work off it lets
 * thousands through on an idle machine and hundreds on a machine loaded four times over; the count says where the
 * work ran, not how fast the machine is.
 */
describe("a decision's write never holds the event loop for agent-sized work", () => {
  it(`keeps the loop turning while a decision reads a ${FORGED_MIB} MiB run file the agent rewrote, and refuses it naming the broken chain`, async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const run = JSON.parse(readFileSync(g.runFile, "utf8")) as RunFile;
    // The agent's file: the run's own first lines (so the run ID is found where a writer looks for it), then its last
    // event copied until the file is FORGED_MIB, each copy naming a previous event that is not there.
    const last = run.events.at(-1) as RunEvent;
    const copy = { ...last, data: { ...last.data, pad: "p".repeat(100) } };
    const per = JSON.stringify(copy, null, 1).length + 4;
    const count = Math.floor((FORGED_MIB * 1024 ** 2) / per);
    const forged = { ...run, events: [...run.events, ...Array.from({ length: count }, (_, i) => ({ ...copy, seq: last.seq + i + 1 }))] };
    writeFileSync(g.runFile, `${JSON.stringify(forged, null, 1)}\n`);
    expect(statSync(g.runFile).size).toBeGreaterThan((FORGED_MIB - 1) * 1024 ** 2);
    const { turns, outcome } = await turnsDuring(() => storeOf(g).update(g.runFile, () => ({ events: stop("agent"), result: undefined })));
    expect("error" in outcome && outcome.error).toBeInstanceOf(IntegrityError);
    expect(String("error" in outcome && (outcome.error as Error).message)).toMatch(/hash chain broken at event/);
    // Read and judged on the thread, the loop turned between the read's slices only (about 60 for 15 MiB, measured); off it, on all along.
    expect(turns).toBeGreaterThan(100);
  }, 120_000);

  it(`keeps the loop turning while decisions land on a run holding a manifest of ${MANIFEST_FILES.toLocaleString("en-US")} files, the agent's reformatted copy of it included`, async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const bulk = path.join(g.handoff, "bulk");
    mkdirSync(bulk);
    for (let i = 0; i < MANIFEST_FILES; i++) writeFileSync(path.join(bulk, `f${String(i).padStart(5, "0")}.bin`), `file ${i}\n`);
    await freeze(g);
    const store = storeOf(g);
    // A decision right after the freeze reads back the bytes this process wrote; one after the agent rewrote the same
    // run in other bytes (compact JSON) reads and judges them afresh.
    const first = await turnsDuring(() => store.update(g.runFile, () => ({ events: stop("one"), result: undefined })));
    expect("value" in first.outcome).toBe(true);
    writeFileSync(g.runFile, JSON.stringify(JSON.parse(readFileSync(g.runFile, "utf8"))));
    const second = await turnsDuring(() => store.update(g.runFile, () => ({ events: stop("two"), result: undefined })));
    expect("value" in second.outcome && second.outcome.value.run.state.stops.map((s) => s.reason)).toEqual(["one", "two"]);
    // Read, serialized and written on the thread, the loop did not turn in either decision (0 turns, measured).
    expect(first.turns).toBeGreaterThan(100);
    expect(second.turns).toBeGreaterThan(100);
  }, 300_000);
});
