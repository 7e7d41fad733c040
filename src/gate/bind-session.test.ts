import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { demoHandoffRecords } from "../demo/demo-handoff.js";
import { bindTestSession } from "../test-support/bound-session.js";
import { admitStep, driveTo, makeGateRun, removeGateRuns } from "../test-support/run-fixture.js";

afterAll(removeGateRuns);

/**
 * A target the frozen plan is read with at binding, in place of A1's own: readiness refuses to freeze a plan with a
 * `..` in a target, so only a plan frozen before that rule can reach a binding with one.
 */
const frozenTarget = vi.hoisted(() => ({ a1: undefined as string | undefined }));
vi.mock("../home/frozen-records.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../home/frozen-records.js")>();
  return {
    ...original,
    readFrozenModel: (...args: Parameters<typeof original.readFrozenModel>) => {
      const model = original.readFrozenModel(...args);
      const a1 = model.actions.find((a) => a.id === "A1");
      if (a1 && frozenTarget.a1 !== undefined) a1.target = frozenTarget.a1;
      return model;
    },
  };
});

/** Bind the session of an admitted pair whose plan's actions have these targets; the bound targets and what exec was told. */
async function bindWithTargets(targets: string[], plant: (dir: string) => void = () => {}) {
  const records = demoHandoffRecords();
  records.actions.actions.forEach((a, i) => {
    a.target = targets[i] ?? a.target;
  });
  const g = makeGateRun({ records });
  await driveTo(g, "dry_run_ready");
  await admitStep(g);
  plant(g.dir);
  const notes: string[] = [];
  const { binding } = await bindTestSession(g, { note: (text) => notes.push(text) });
  return { g, targets: binding.targets.map((t) => path.relative(g.dir, t)), notes };
}

describe("the targets a bound session may write", () => {
  it("are the admitted actions' targets as written, with a line range dropped", async () => {
    const { targets, notes } = await bindWithTargets(["cart/cache_race_test.go", "cart/cache.go:80-95"]);
    expect(targets).toEqual(["cart/cache.go", "cart/cache_race_test.go"]);
    expect(notes).toEqual([]);
  });

  it("leave out a target with a .. part, which reads as a file and names its folder (cart/cache_race_test.go/..), and say so", async () => {
    frozenTarget.a1 = "cart/cache_race_test.go/..:1-2";
    const { targets, notes } = await bindWithTargets(["cart/cache_race_test.go", "cart/cache.go"]).finally(() => {
      frozenTarget.a1 = undefined;
    });
    expect(targets).toEqual(["cart/cache.go"]);
    expect(notes).toEqual([
      "twinlock: action A1's target cart/cache_race_test.go/.. holds a .. part; it scopes no file, so the hook denies writes to it",
    ]);
  });

  it("leave out a target whose path goes through a symbolic link the agent planted (lib -> .), and say so", async () => {
    const { targets, notes } = await bindWithTargets(["lib/cache.go", "cart/cache.go"], (dir) => {
      mkdirSync(path.join(dir, "cart"), { recursive: true });
      symlinkSync(".", path.join(dir, "lib"));
    });
    expect(targets).toEqual(["cart/cache.go"]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^twinlock: action A1's target lib\/cache\.go goes through a symbolic link to .*; it scopes no file/);
  });
});

describe("a target inside the planner's handoff folder", () => {
  it("scopes no file for the executor (the planner's session may write there), and exec says so", async () => {
    const { targets, notes } = await bindWithTargets(["handoff/cache_race_test.go", "cart/cache.go"]);
    expect(targets).toEqual(["cart/cache.go"]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^twinlock: action A1's target handoff\/cache_race_test\.go is inside the planner's handoff folder/);
  });
});
