import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../test-support/run-cli.js";
import { driveTo, editHandoff, freeze, makeGateRun, PLANNER, removeGateRuns } from "../test-support/run-fixture.js";

afterAll(removeGateRuns);

describe("present's list of what changed between revisions", () => {
  it("names a changed file as a file, not as a marker in code", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_revision_pending");
    editHandoff(g, "a line more");
    await freeze(g);
    const r = await runCli(["present", g.runFile, PLANNER, "--home", g.home]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toContain("- **changed** file `report.md`");
    expect(r.stdout).not.toContain("`file report.md`");
  });
});
