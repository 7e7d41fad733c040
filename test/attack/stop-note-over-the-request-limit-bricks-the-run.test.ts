/**
 * The attack: `twinlock stop RUN --reason x --note TEXT` with a note of
 * 16,385 to 65,536 bytes (the CLI's --note takes up to 64 KiB, and so does the
 * run's chain). The stop is recorded in the gate home (runs/RUN_ID.stops/),
 * but the reader of pending stops allows a note of 16 Ki characters only: the
 * stop itself fails with "the gate home is damaged", and from then on every
 * read of the run is refused the same way and no writer can write the stop
 * into the chain, so no later stop, resolve-stop, pair-status or admit of the
 * run works until a person edits the gate home by hand. Anyone may raise a
 * stop (the agent too), and a person's own long note does the same.
 */
import { afterAll, describe, expect, it } from "vitest";
import { raiseStop } from "../../src/gate/hard-stops.js";
import { readRun } from "../../src/home/run-ledger.js";
import { driveTo, homeOf, makeGateRun, removeGateRuns, storeOf } from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

const message = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (error: Error) => error.message,
  );

describe("a stop with a note the CLI and the chain accept (over 16 Ki characters)", () => {
  it("is recorded, every read of the run shows it, and it is written into the chain", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const note = "n".repeat(16 * 1024 + 1);
    const outcome = {
      stop: await message(raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", note, actor: "person" })),
      read: await message(storeOf(g).read(g.runFile)),
      nextWrite: await message(storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }))),
    };
    expect(outcome).toEqual({ stop: "ok", read: "ok", nextWrite: "ok" });
    expect(
      readRun(g.runFile, homeOf(g))
        .file.events.filter((e) => e.type === "stop_raised")
        .map((e) => e.data.note),
    ).toEqual([note]);
  });
});
