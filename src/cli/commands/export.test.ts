import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../test-support/run-cli.js";
import { driveTo, makeGateRun, makeRunTempDir, removeGateRuns } from "../../test-support/run-fixture.js";

afterAll(removeGateRuns);

describe("twinlock export", () => {
  it("writes the run as a run file that verify-log verifies offline, with every frozen file by its sha256", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const out = path.join(makeRunTempDir("twinlock-export-"), "bundle");
    const r = await runCli(["export", g.runFile, "--out", out, "--home", g.home]);
    expect(r.code, r.output).toBe(0);
    expect(readFileSync(path.join(out, "run.json"))).toEqual(readFileSync(g.runFile));
    const blobs = readdirSync(path.join(out, "frozen"));
    expect(blobs.length).toBeGreaterThan(0);
    for (const b of blobs)
      expect(
        createHash("sha256")
          .update(readFileSync(path.join(out, "frozen", b)))
          .digest("hex"),
      ).toBe(b);
    const v = await runCli(["verify-log", path.join(out, "run.json")]);
    expect(v.code, v.output).toBe(0);
  });

  it("refuses a folder that is not empty, and writes nothing there", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const r = await runCli(["export", g.runFile, "--out", g.dir, "--home", g.home]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not empty/);
  });
});
