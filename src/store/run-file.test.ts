import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import type { RunFile } from "../run/run-schema.js";
import { driveTo, makeGateRun, removeGateRuns } from "../test-support/run-fixture.js";
import { readRunFile } from "./run-file.js";

afterAll(removeGateRuns);

describe("readRunFile's memory of verified bytes", () => {
  it("verifies a run file again once its bytes change, even right after the same process verified it", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    expect(readRunFile(g.runFile).file.revision).toBeGreaterThan(1);
    const json = JSON.parse(readFileSync(g.runFile, "utf8")) as RunFile;
    // The stored state says the plan is already approved; the events say otherwise.
    (json.state.workflows["MD-29"] as { state: string }).state = "execution_consent_pending";
    writeFileSync(g.runFile, `${JSON.stringify(json, null, 1)}\n`);
    expect(() => readRunFile(g.runFile)).toThrow(/stored state differs from the replay/);
  });
});
