import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { readRunWaiting } from "../home/run-ledger.js";
import { stopOffThreadWorkers } from "../offload/run-off-thread.js";
import type { RunFile } from "../run/run-schema.js";
import { countTurns } from "../test-support/count-turns.js";
import { runWithEmptyEvents } from "../test-support/run-file-writers.js";
import { driveTo, homeOf, makeGateRun, removeGateRuns } from "../test-support/run-fixture.js";
import {
  appendTo,
  type EventDraft,
  readRunFile,
  readRunFileAsync,
  runFileReadsInFlight,
  runFileReadsMade,
  serializeRunFile,
} from "./run-file.js";

afterAll(async () => {
  removeGateRuns();
  await stopOffThreadWorkers();
});

const MiB = 1024 * 1024;
/**
 * The chained run of the last test: at the 16 MiB record budget with TWINLOCK_SOAK=1 (the attack as measured), 8 MiB
 * by default, which is as far over what the thread may judge itself (256 KiB) and takes it a like share of the time.
 */
const CHAINED_BYTES = process.env.TWINLOCK_SOAK === "1" ? 16 * MiB : 8 * MiB;

/** A run file's top (format, revision, head, state) with `events` JSON in place of its events: junk the schema refuses. */
function withJunkEvents(runFile: string, bytes: number): string {
  const { events: _events, ...rest } = JSON.parse(readFileSync(runFile, "utf8")) as RunFile;
  const head = `${JSON.stringify(rest).slice(0, -1)},"events":[`;
  const one = `{"junk":"${"x".repeat(1400)}"}`;
  const count = Math.floor((bytes - head.length - 2) / (one.length + 1));
  return `${head}${Array.from({ length: count }, () => one).join(",")}]}`;
}

/** The run extended by as many validly chained stop_raised events (made with the library's own append) as fit in `bytes`. */
function withUnrecordedStops(runFile: string, bytes: number): string {
  const run = readRunFile(runFile).file;
  const raise = (i: number): EventDraft => ({
    type: "stop_raised",
    actor: "agent",
    data: { reason: `r${i % 7}`, workflow: null, note: null },
  });
  // About 28,500 such events fit in 16 MiB.
  let count = Math.floor((28_500 * bytes) / (16 * MiB));
  for (;;) {
    const text = serializeRunFile(
      appendTo(
        run,
        Array.from({ length: count }, (_, i) => raise(i)),
        new Date(),
      ),
    );
    if (Buffer.byteLength(text) < bytes) return text;
    count = Math.floor(count * 0.95);
  }
}

/** Turns of the event loop while `work` runs (each turn schedules the next). */
async function turnsWhile<T>(work: () => Promise<T>): Promise<{ turns: number; outcome: T | Error }> {
  const stop = countTurns();
  try {
    const outcome = await work().catch((e: Error) => e);
    return { turns: stop(), outcome };
  } finally {
    stop();
  }
}

describe("a flood of reads of one run file", () => {
  it("is served by one read at a time (the asks joining it), so another run's read is not queued behind the flood", async () => {
    const flooded = makeGateRun();
    await driveTo(flooded, "plan_review_pending");
    const other = makeGateRun();
    await driveTo(other, "plan_review_pending");
    // The agent's junk in its run file's place: 2 MiB the schema refuses (read in 8 slices, judged once).
    writeFileSync(flooded.runFile, withJunkEvents(flooded.runFile, 2 * MiB));
    let most = 0;
    let sampling = true;
    const sample = () => {
      most = Math.max(most, runFileReadsInFlight());
      if (sampling) setImmediate(sample);
    };
    setImmediate(sample);
    const readsBefore = runFileReadsMade();
    let floodAnswered = 0;
    let floodAnsweredWhenOtherWas = -1;
    try {
      const flood = Array.from({ length: 150 }, () =>
        readRunFileAsync(flooded.runFile).then(
          () => "read",
          (e: unknown) => {
            floodAnswered++;
            return e;
          },
        ),
      );
      const otherRead = readRunFileAsync(other.runFile).then((r) => {
        floodAnsweredWhenOtherWas = floodAnswered;
        return r;
      });
      const answers = await Promise.all(flood);
      expect((await otherRead).file.revision).toBeGreaterThan(0);
      // Every ask gets the refusal, each its own copy (with the message of the schema's first issue).
      expect(answers.every((a) => a instanceof UsageError && /does not match the run-file schema/.test(a.message))).toBe(true);
      expect(new Set(answers).size).toBe(150);
    } finally {
      sampling = false;
    }
    // Served in order by 4 slots, the other run's read waited for 146 of the flood's (and 4 slots were held all along).
    expect(floodAnsweredWhenOtherWas).toBeLessThan(4);
    expect(most).toBeLessThanOrEqual(2);
    // The ask that started the flood's first read, and one more read for every ask that came while it was under way.
    expect(runFileReadsMade() - readsBefore).toBeLessThanOrEqual(3);
  }, 60_000);

  it("still holds at most 4 run files' bytes at once when each ask is for another run file", async () => {
    // 3 million empty events: over the budget after its first slices (each read yields between them). One run made,
    // and its file copied to 7 more names beside it: 8 run files, each asked for once.
    const g = await runWithEmptyEvents(3_000_000);
    const runs = [g, ...Array.from({ length: 7 }, (_, i) => ({ runFile: `${g.runFile}.${i}.json` }))];
    for (const r of runs.slice(1)) copyFileSync(g.runFile, r.runFile);
    let most = 0;
    let sampling = true;
    const sample = () => {
      most = Math.max(most, runFileReadsInFlight());
      if (sampling) setImmediate(sample);
    };
    setImmediate(sample);
    try {
      const answers = await Promise.all(runs.map((g) => readRunFileAsync(g.runFile).catch((e: unknown) => e)));
      expect(answers.every((a) => a instanceof UsageError)).toBe(true);
    } finally {
      sampling = false;
    }
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
  }, 60_000);

  it("answers an ask made while a read is under way from a read begun after the ask: a write between is seen", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const good = readFileSync(g.runFile, "utf8");
    writeFileSync(g.runFile, withJunkEvents(g.runFile, 2 * MiB));
    const first = readRunFileAsync(g.runFile).catch((e: Error) => e);
    // The first read has its slot and is reading its slices; the good run is put back, then asked for.
    await new Promise((resolve) => setImmediate(resolve));
    writeFileSync(g.runFile, good);
    const second = readRunFileAsync(g.runFile);
    expect(await first).toBeInstanceOf(UsageError);
    expect((await second).file.revision).toBe((JSON.parse(good) as RunFile).revision);
  });
});

describe("the server's event loop while it judges a new run file of many MiB", () => {
  it("keeps turning while a server reads 16 MiB of junk events in a run file's place, and refuses it as before", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    writeFileSync(g.runFile, withJunkEvents(g.runFile, 16 * MiB - 1024));
    const sync = (() => {
      try {
        readRunFile(g.runFile);
      } catch (e) {
        return e as Error;
      }
    })();
    // A new name for the same bytes: its first read by the server is not the one the synchronous read remembered.
    writeFileSync(g.runFile, `${readFileSync(g.runFile, "utf8")} `);
    const { turns, outcome } = await turnsWhile(() => readRunWaiting(g.runFile, homeOf(g)));
    expect(outcome).toBeInstanceOf(UsageError);
    expect((outcome as Error).message).toBe(sync?.message);
    // Parsed on the thread, the loop turned only between the 64 slices of the read (about 70 turns); off it, thousands.
    expect(turns).toBeGreaterThan(1_000);
  }, 60_000);

  it(`keeps turning while a server reads a validly chained run of ~${Math.round((28.5 * CHAINED_BYTES) / (16 * MiB))}k stop_raised events the gate home never recorded, and refuses it as before`, async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const text = withUnrecordedStops(g.runFile, CHAINED_BYTES);
    writeFileSync(g.runFile, text);
    const { turns, outcome } = await turnsWhile(() => readRunWaiting(g.runFile, homeOf(g)));
    expect(outcome).toBeInstanceOf(IntegrityError);
    expect((outcome as Error).message).toMatch(/has events \d+–\d+ that the gate home never recorded/);
    // Checked and replayed on the thread, the loop turned only between the read's slices; off it, thousands.
    expect(turns).toBeGreaterThan(1_000);
  }, 120_000);
});
