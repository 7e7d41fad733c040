import { createHash } from "node:crypto";
import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../test-support/run-cli.js";
import { driveTo, homeOf, makeGateRun, makeRunTempDir, removeGateRuns } from "../../test-support/run-fixture.js";
import { ensureGateKey } from "../../trust/gate-key.js";
import { verifyGateStatement } from "../../trust/gate-statement.js";

afterAll(removeGateRuns);

describe("twinlock export", () => {
  it("writes the run as a run file that verify-log verifies offline, with every frozen file by its sha256", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const out = path.join(makeRunTempDir("twinlock-export-"), "bundle");
    const r = await runCli(["export", g.runFile, "--out", out, "--home", g.home]);
    expect(r.code, r.output).toBe(0);
    // The run file as the gate holds it, its head signed again by the gate as an export, not as its checkpoint.
    const exported = JSON.parse(readFileSync(path.join(out, "run.json"), "utf8"));
    const held = JSON.parse(readFileSync(g.runFile, "utf8"));
    expect({ ...exported, gate_signature: undefined }).toEqual({ ...held, gate_signature: undefined });
    expect(held.gate_signature.kind).toBe("checkpoint");
    expect(exported.gate_signature).toMatchObject({ kind: "export", gate_key: (await ensureGateKey(homeOf(g))).publicKey });
    expect(verifyGateStatement(exported.gate_signature, "export", held.state.run_id, held.revision, held.head)).toBe(true);
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

  it("prints check commands that pass as printed, where the run's gate home is the default and the run went on after the export", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const out = path.join(makeRunTempDir("twinlock-export-"), "bundle");
    const r = await runCli(["export", g.runFile, "--out", out, "--home", g.home]);
    expect(r.code, r.output).toBe(0);
    const closed = await runCli(["close", g.runFile, "MD-29", "--result", "rolled_back", "--residual", "undone", "--home", g.home]);
    expect(closed.code, closed.output).toBe(0);
    const hints = [...r.output.matchAll(/`twinlock ([^`]+)`/g)].map((m) => (m[1] as string).split(" "));
    expect(hints.map((h) => h[0])).toEqual(["verify-log", "verify-receipts"]);
    const before = process.env.TWINLOCK_HOME;
    process.env.TWINLOCK_HOME = g.home;
    try {
      for (const argv of hints) {
        const v = await runCli(argv);
        expect(v.code, `${argv.join(" ")}: ${v.output}`).toBe(0);
      }
    } finally {
      if (before === undefined) delete process.env.TWINLOCK_HOME;
      else process.env.TWINLOCK_HOME = before;
    }
  });

  it("refuses a folder that is not empty, and writes nothing there", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const r = await runCli(["export", g.runFile, "--out", g.dir, "--home", g.home]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not empty/);
  });
  it("writes nothing at all when it refuses part-way, as with a pin gone stale (no half-made folder to block the next try)", async () => {
    // Its own copy of the suite: the shared one is pinned for every other test file running meanwhile.
    const g = makeGateRun({ copySuite: true });
    await driveTo(g, "plan_review_pending");
    appendFileSync(path.join(g.suite, "twinlock.yaml"), "\n# edited after the pin\n");
    const parent = makeRunTempDir("twinlock-export-");
    const out = path.join(parent, "bundle");
    const r = await runCli(["export", g.runFile, "--out", out, "--home", g.home]);
    expect(r.code, r.output).not.toBe(0);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(parent)).toEqual([]);
  });
});
