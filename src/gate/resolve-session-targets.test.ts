import { mkdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bindTestSession } from "../test-support/bound-session.js";
import { admitStep, driveTo, makeGateRun, removeGateRuns, runBytes, storeOf } from "../test-support/run-fixture.js";
import { targetsToAdmit } from "./resolve-session-targets.js";

afterAll(removeGateRuns);

describe("targetsToAdmit", () => {
  it("names, before the admission and writing nothing, the very targets the session is bound to after it", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    mkdirSync(path.join(g.dir, "cart"));
    const before = runBytes(g);
    const targets = await targetsToAdmit({ store: storeOf(g), runFile: g.runFile, executor: "MD-30", projectDir: g.dir });
    expect(runBytes(g).equals(before)).toBe(true);
    const dir = realpathSync(g.dir);
    expect(targets).toEqual([path.join(dir, "cart", "cache.go"), path.join(dir, "cart", "cache_race_test.go")]);
    await admitStep(g);
    const { binding } = await bindTestSession(g);
    expect(binding.targets).toEqual(targets);
  });

  it("names only the asked actions' targets, and none for a pair with no approved consent or no such executor", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    const store = storeOf(g);
    expect(await targetsToAdmit({ store, runFile: g.runFile, executor: "MD-30", projectDir: g.dir })).toEqual([]);
    const h = makeGateRun();
    await driveTo(h, "dry_run_ready");
    const some = await targetsToAdmit({ store: storeOf(h), runFile: h.runFile, executor: "MD-30", actions: ["A2"], projectDir: h.dir });
    expect(some.map((t) => path.relative(realpathSync(h.dir), t))).toEqual(["cart/cache.go"]);
    expect(await targetsToAdmit({ store: storeOf(h), runFile: h.runFile, executor: "MD-99", planner: "MD-98", projectDir: h.dir })).toEqual(
      [],
    );
  });
});
