/**
 * A gate home on a disk that fills: a freeze that runs out of space is a
 * refusal naming the full disk (ENOSPC), and changes nothing — not the run
 * file, not the checkpoint, no copy left in the home. Needs a small tmpfs
 * (`mount -t tmpfs`, root only); skipped where mounting is not permitted.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readCheckpoint } from "../../src/home/run-checkpoints.js";
import { readRun } from "../../src/home/run-ledger.js";
import { runCli } from "../../src/test-support/run-cli.js";
import { driveTo, freeze, type GateRun, homeOf, makeGateRun, removeGateRuns, runBytes } from "../../src/test-support/run-fixture.js";

/** A 4 MiB tmpfs, or undefined where this process may not mount one. */
function mountSmallDisk(): string | undefined {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-small-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", dir], { stdio: "ignore" });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

const disk = mountSmallDisk();

afterAll(() => {
  try {
    if (disk) {
      execFileSync("umount", [disk], { stdio: "ignore" });
      rmSync(disk, { recursive: true, force: true });
    }
  } finally {
    removeGateRuns();
  }
});

describe.skipIf(disk === undefined)("a gate home on a full disk", () => {
  it("refuses a freeze the disk has no room for, naming ENOSPC in one line, and changes nothing", async () => {
    const g: GateRun = { ...makeGateRun(), home: path.join(disk as string, "home") };
    await driveTo(g, "plan_revision_pending");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    // 6 MiB that do not compress or hole: more than the whole disk.
    writeFileSync(path.join(g.handoff, "evidence.bin"), randomBytes(6 * 1024 * 1024));
    const bytes = runBytes(g);
    const checkpoint = readCheckpoint(home, runId);

    const r = await runCli(["freeze-pair-handoff", g.runFile, "MD-29", "--home", g.home, "--handoff", g.handoff]);
    expect(r.code, r.output).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/the disk holding .* is full \(ENOSPC\); the write was undone and nothing of it was kept/);
    expect(r.output).not.toMatch(/internal error|\n\s+at /);
    // Nothing changed: the run file, the home's checkpoint, and no half copy left taking the disk.
    expect(runBytes(g).equals(bytes)).toBe(true);
    expect(readCheckpoint(home, runId)).toEqual(checkpoint);
    expect(readdirSync(path.join(g.home, "tmp"))).toEqual([]);

    // The home works on: with the bulky file gone, the same freeze goes through.
    rmSync(path.join(g.handoff, "evidence.bin"));
    writeFileSync(path.join(g.handoff, "note.txt"), "the evidence is cited by digest instead\n");
    const frozen = await freeze(g);
    expect(frozen.revision).toBe(2);
  });
});
