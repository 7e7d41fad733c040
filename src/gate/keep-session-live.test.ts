import { existsSync, statSync, utimesSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { bindingFileOf } from "../home/write-session-binding.js";
import { bindTestSession } from "../test-support/bound-session.js";
import { admitStep, driveTo, homeOf, makeGateRun, removeGateRuns, storeOf } from "../test-support/run-fixture.js";
import { raiseStop } from "./hard-stops.js";
import { keepSessionLive } from "./keep-session-live.js";

afterAll(removeGateRuns);

describe("keeping a bound session live", () => {
  it("renews the binding's lease while the run is unchanged, and removes the binding, saying why, once the run changes", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    await admitStep(g);
    const { binding } = await bindTestSession(g);
    const file = bindingFileOf(homeOf(g), binding);
    const old = new Date(Date.now() - 20_000);
    utimesSync(file, old, old);
    let ended: (reason: string) => void = () => {};
    const endedWith = new Promise<string>((resolve) => {
      ended = resolve;
    });
    const keeper = keepSessionLive({ store: storeOf(g), ref: g.runFile, home: homeOf(g), binding, onEnd: ended, every: 20 });
    try {
      while (statSync(file).mtimeMs <= old.getTime() + 1000) await new Promise((r) => setTimeout(r, 20));
      // The run is written behind the session's back (no binding removed by the writer): the keeper's re-check ends it.
      await storeOf(g).update(g.runFile, () => ({
        events: [{ type: "stop_raised", actor: "bob", data: { reason: "halt", workflow: null, note: null } }],
        result: undefined,
      }));
      expect(await endedWith).toMatch(/was written since the session was bound/);
      expect(existsSync(file)).toBe(false);
    } finally {
      await keeper.stop();
    }
  });

  it("stops at once when the binding was removed by someone else (a stop), without writing it back", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    await admitStep(g);
    const { binding } = await bindTestSession(g);
    let ended: (reason: string) => void = () => {};
    const endedWith = new Promise<string>((resolve) => {
      ended = resolve;
    });
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "bob" });
    const keeper = keepSessionLive({ store: storeOf(g), ref: g.runFile, home: homeOf(g), binding, onEnd: ended, every: 20 });
    try {
      expect(await endedWith).toMatch(/was written since|binding was removed/);
      expect(existsSync(bindingFileOf(homeOf(g), binding))).toBe(false);
    } finally {
      await keeper.stop();
    }
  });
});
