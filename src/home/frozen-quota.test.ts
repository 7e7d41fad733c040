import { spawn } from "node:child_process";
import { closeSync, ftruncateSync, openSync, readdirSync, statSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RefusalError } from "../errors/errors.js";
import { raiseStop } from "../gate/hard-stops.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../test-support/ensure-built.js";
import { runCli } from "../test-support/run-cli.js";
import {
  driveTo,
  freeze,
  type GateRun,
  homeOf,
  makeGateRun,
  makeRunTempDir,
  removeGateRuns,
  review,
  runBytes,
  storeOf,
} from "../test-support/run-fixture.js";
import { stoppedClaimant } from "../test-support/stopped-claimant.js";
import { storeFetchedBlob } from "./frozen-bytes.js";
import { homeFrozenUsage, runBlobRefs } from "./frozen-quota.js";
import { readRun } from "./run-ledger.js";

// The racing freezes and the collector are processes of the built library (dist/), as installed: starting one from the
// sources through tsx took seconds of transforming each time.
beforeAll(ensureBuilt, 300_000);
afterAll(removeGateRuns);

/** A run of the demo pair in a gate home of its own, frozen once and sent back for changes (so it may be frozen again). */
async function runInOwnHome(settings?: Record<string, unknown>): Promise<GateRun> {
  const g = { ...makeGateRun(), home: makeRunTempDir("twinlock-quota-home-") };
  if (settings) {
    homeOf(g);
    writeFileSync(path.join(g.home, "settings.json"), JSON.stringify({ format: "twinlock-home-settings/1", ...settings }));
  }
  await driveTo(g, "plan_revision_pending");
  return g;
}

/** A file of `size` bytes with only `data` written at its start: the rest is a hole, taking no space. */
function sparseFile(file: string, size: number, data: string): void {
  const fd = openSync(file, "w");
  try {
    writeSync(fd, data);
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
}

function tmpEntries(g: GateRun): string[] {
  return readdirSync(path.join(g.home, "tmp"));
}

describe("the gate home's quota on frozen bytes", () => {
  // 64 MiB with TWINLOCK_SOAK=1; 16 MiB by default, whose three full copies would still be 48 times the bound.
  const SPARSE = (process.env.TWINLOCK_SOAK === "1" ? 64 : 16) * 1024 * 1024;
  it(`stores a sparse file by the bytes it takes: three re-freezes of a different ${SPARSE / 1024 / 1024} MiB sparse file add under 1 MiB`, async () => {
    const g = await runInOwnHome();
    const before = homeFrozenUsage(homeOf(g)).bytes;
    for (let i = 0; i < 3; i++) {
      sparseFile(path.join(g.handoff, "evidence.bin"), SPARSE, `revision ${i} ${Math.random()}\n`);
      await freeze(g);
      if (i < 2) await review(g, "changes_requested");
    }
    const added = homeFrozenUsage(homeOf(g)).bytes - before;
    expect(added).toBeLessThan(1024 * 1024);
    // The frozen copy reads back as the file: the same size, and the handoff hash was taken over every byte.
    const frozen = readRun(g.runFile, homeOf(g)).state.workflows["MD-29"]?.handoff?.files.find((f) => f.path === "evidence.bin");
    expect(frozen?.size).toBe(SPARSE);
  });

  it("refuses, before storing anything, a re-freeze whose new bytes would take the run past its limit, naming the limit and the usage", async () => {
    const g = await runInOwnHome({ frozen_bytes_per_run: 256 * 1024 });
    writeFileSync(path.join(g.handoff, "evidence.bin"), Buffer.alloc(160 * 1024, 1));
    await freeze(g);
    await review(g, "changes_requested");
    writeFileSync(path.join(g.handoff, "evidence.bin"), Buffer.alloc(160 * 1024, 2));
    const bytes = runBytes(g);
    const blobs = homeFrozenUsage(homeOf(g)).blobs;
    const error = await freeze(g).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefusalError);
    expect((error as Error).message).toMatch(
      /^the freeze would store 1\d\d KiB of frozen files for run run_[0-9a-f]{16}, which already uses 1\d\d KiB, over the limit of 256 KiB per run \(frozen_bytes_per_run, set in .*settings\.json\)/,
    );
    expect((error as RefusalError).details).toMatchObject({ quota: "frozen_bytes_per_run", limit: 256 * 1024 });
    // Nothing changed: the run file, the stored blobs, and no copy left in the home's scratch folder.
    expect(runBytes(g).equals(bytes)).toBe(true);
    expect(homeFrozenUsage(homeOf(g)).blobs).toBe(blobs);
    expect(tmpEntries(g)).toEqual([]);
  });

  it("counts a re-freeze's unchanged files nothing: bytes the run already stores under their sha256 are not stored again", async () => {
    const g = await runInOwnHome({ frozen_bytes_per_run: 256 * 1024 });
    writeFileSync(path.join(g.handoff, "evidence.bin"), Buffer.alloc(160 * 1024, 1));
    await freeze(g);
    const first = readRun(g.runFile, homeOf(g)).state.workflows["MD-29"]?.revision ?? 0;
    await review(g, "changes_requested");
    writeFileSync(path.join(g.handoff, "report.md"), "# Report\n\nOne line changed.\n");
    await freeze(g);
    expect(readRun(g.runFile, homeOf(g)).state.workflows["MD-29"]?.revision).toBe(first + 1);
  });

  it("refuses before copying a freeze whose files alone pass the run's limit", async () => {
    const g = await runInOwnHome({ frozen_bytes_per_run: 64 * 1024 });
    writeFileSync(path.join(g.handoff, "evidence.bin"), Buffer.alloc(96 * 1024, 4));
    const error = await freeze(g).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefusalError);
    expect((error as RefusalError).details).toMatchObject({ quota: "frozen_bytes_per_run" });
    expect(tmpEntries(g)).toEqual([]);
  });

  it("refuses a freeze past the home's limit with a one-line message that names `twinlock home gc`", async () => {
    const g = await runInOwnHome({ frozen_bytes_per_home: 64 * 1024 });
    writeFileSync(path.join(g.handoff, "evidence.bin"), Buffer.alloc(96 * 1024, 3));
    const r = await runCli(["freeze-pair-handoff", g.runFile, "MD-29", "--home", g.home, "--handoff", g.handoff]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/over the limit of 64 KiB per gate home \(frozen_bytes_per_home, .*\); run `twinlock home gc`/);
  });

  it("holds the home's limit when two runs freeze at once, each fitting alone: one is refused, and the home stays within it", async () => {
    const a = await runInOwnHome();
    const b = { ...makeGateRun(), home: a.home };
    await driveTo(b, "plan_revision_pending");
    const home = homeOf(a);
    // Room for one 600 KiB file beside what the home holds, not for two (each passed the old precheck, measured from the
    // home before either kept its bytes, and both were kept).
    const limit = homeFrozenUsage(home).bytes + 900 * 1024;
    writeFileSync(path.join(a.home, "settings.json"), JSON.stringify({ format: "twinlock-home-settings/1", frozen_bytes_per_home: limit }));
    writeFileSync(path.join(a.handoff, "evidence.bin"), Buffer.alloc(600 * 1024, 5));
    writeFileSync(path.join(b.handoff, "evidence.bin"), Buffer.alloc(600 * 1024, 6));
    const outcomes = await Promise.allSettled([freeze(a), freeze(b)]);
    const refused = outcomes.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(RefusalError);
    expect((refused[0] as RefusalError).details).toMatchObject({ quota: "frozen_bytes_per_home" });
    expect(homeFrozenUsage(home).bytes).toBeLessThanOrEqual(limit);
    // The reservations went with their freezes.
    expect(tmpEntries(a).filter((n) => n.startsWith("quota-") || n.startsWith("snap-"))).toEqual([]);
  });

  it("holds the home's limit exactly when three freezes race from separate processes: one is kept, the bytes kept never pass it", async () => {
    const runs = [await runInOwnHome()];
    for (let i = 1; i < 3; i++) {
      const g = { ...makeGateRun(), home: runs[0]?.home as string };
      await driveTo(g, "plan_revision_pending");
      runs.push(g);
    }
    const home = homeOf(runs[0] as GateRun);
    const limit = homeFrozenUsage(home).bytes + 900 * 1024;
    writeFileSync(
      path.join(home.dir, "settings.json"),
      JSON.stringify({ format: "twinlock-home-settings/1", frozen_bytes_per_home: limit }),
    );
    for (const [i, g] of runs.entries()) writeFileSync(path.join(g.handoff, "evidence.bin"), Buffer.alloc(600 * 1024, 7 + i));
    const results = await Promise.all(
      runs.map(
        (g) =>
          new Promise<{ code: number | null; stderr: string }>((resolve) => {
            const child = spawn(
              process.execPath,
              [DIST_BIN, "freeze-pair-handoff", g.runFile, "MD-29", "--home", g.home, "--handoff", g.handoff],
              { stdio: ["ignore", "ignore", "pipe"] },
            );
            let stderr = "";
            child.stderr.on("data", (d: Buffer) => {
              stderr += d.toString();
            });
            child.once("exit", (code) => resolve({ code, stderr }));
          }),
      ),
    );
    // No lock between them: each claims its bytes, then stores them only when they fit beside every claim it sees, and
    // a freeze behind gives way to one ahead, so exactly one is kept (never none, never two).
    expect(results.filter((r) => r.code === 0)).toHaveLength(1);
    for (const r of results.filter((r) => r.code !== 0)) expect(r.stderr).toMatch(/frozen_bytes_per_home/);
    expect(homeFrozenUsage(home).bytes).toBeLessThanOrEqual(limit);
    expect(tmpEntries(runs[0] as GateRun).filter((n) => n.startsWith("quota-"))).toEqual([]);
  }, 120_000);

  it("takes back the share of a freeze killed after it claimed its bytes and before it stored them: the next freeze has the room", async () => {
    const a = await runInOwnHome();
    const home = homeOf(a);
    writeFileSync(path.join(a.handoff, "evidence.bin"), Buffer.alloc(600 * 1024, 9));
    const limit = homeFrozenUsage(home).bytes + 700 * 1024;
    writeFileSync(path.join(a.home, "settings.json"), JSON.stringify({ format: "twinlock-home-settings/1", frozen_bytes_per_home: limit }));
    // Another run's freeze of 600 KiB, killed mid-write: its reservation and claim stay in the home's scratch folder.
    const killed = await stoppedClaimant(home, "run_00000000000000ff", 600 * 1024);
    const exited = new Promise((r) => killed.once("exit", r));
    killed.kill("SIGKILL");
    await exited;
    expect(tmpEntries(a).filter((n) => n.startsWith("quota-"))).toHaveLength(1);
    const frozen = await freeze(a);
    expect(frozen.workflow.state).toBe("plan_review_pending");
    expect(tmpEntries(a).filter((n) => n.startsWith("quota-"))).toEqual([]);
    expect(homeFrozenUsage(home).bytes).toBeLessThanOrEqual(limit);
  });

  it("refuses a settings file with an unknown setting or a limit that is not a whole number of bytes", async () => {
    const g = await runInOwnHome();
    writeFileSync(path.join(g.home, "settings.json"), JSON.stringify({ format: "twinlock-home-settings/1", frozen_bytes_per_run: "1G" }));
    await review(g, "changes_requested").catch(() => undefined);
    await expect(freeze(g)).rejects.toThrow(/frozen_bytes_per_run must be a whole number of bytes, not "1G"/);
    writeFileSync(path.join(g.home, "settings.json"), JSON.stringify({ format: "twinlock-home-settings/1", quota: 1 }));
    await expect(freeze(g)).rejects.toThrow(/unknown setting "quota"/);
  });
});

describe("twinlock home gc", () => {
  it("collects the frozen files no run uses, keeps every one a run's freezes name, and accounts for what remains", async () => {
    const g = await runInOwnHome();
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const used = runBlobRefs(home, runId);
    expect(used?.size).toBeGreaterThan(0);
    // Bytes no run names: what a refused import or a freeze cut short by a full disk leaves.
    const orphan = Buffer.from("an orphan nobody froze\n");
    const { createHash } = await import("node:crypto");
    storeFetchedBlob(home, createHash("sha256").update(orphan).digest("hex"), orphan);
    const r = await runCli(["home", "gc", "--home", g.home, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.collected.blobs).toBe(1);
    expect(doc.remaining.blobs).toBe(used?.size);
    expect(doc.runs.map((x: { run_id: string }) => x.run_id)).toEqual([runId]);
    // Every frozen file of the run is still there and intact: the run can still be frozen, reviewed and stopped.
    await raiseStop({ run: g.runFile, store: storeOf(g), reason: "halt", actor: "alice" });
    expect(readRun(g.runFile, home).state.workflows["MD-29"]?.state).toBe("plan_revision_pending");
  });

  it("never collects the bytes of a freeze running at the same moment, with a collector running over and over in another process", async () => {
    const g = await runInOwnHome();
    const home = homeOf(g);
    const source = path.join(REPO_ROOT, "dist", "home", "frozen-quota.js");
    const gates = path.join(REPO_ROOT, "dist", "home", "gate-home.js");
    const script = [
      `const { collectFrozenGarbage } = await import(${JSON.stringify(source)});`,
      `const { openGateHome } = await import(${JSON.stringify(gates)});`,
      `const home = openGateHome(${JSON.stringify(g.home)});`,
      `let passes = 0;`,
      `process.stdin.on("data", () => {}).on("end", () => { process.stdout.write(String(passes)); process.exit(0); });`,
      `for (;;) { await collectFrozenGarbage(home, () => []); passes++; await new Promise((r) => setImmediate(r)); if (passes === 1) process.stderr.write("running\\n"); }`,
    ].join("\n");
    const collector = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: REPO_ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise((r) => collector.once("exit", r));
    try {
      let out = "";
      collector.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      await new Promise<void>((resolve, reject) => {
        collector.stderr.on("data", (d: Buffer) => (d.toString().includes("running") ? resolve() : reject(new Error(d.toString()))));
        collector.once("exit", (code) => reject(new Error(`the collector exited (${code})`)));
      });
      for (let i = 0; i < 6; i++) {
        writeFileSync(path.join(g.handoff, "evidence.bin"), `fresh ${i} ${Math.random()}\n`);
        const frozen = await freeze(g);
        for (const f of frozen.workflow.handoff?.files ?? [])
          expect(statSync(path.join(g.home, "blobs", f.sha256.slice(0, 2), f.sha256)).isFile(), `freeze ${i}: ${f.path}`).toBe(true);
        await review(g, "changes_requested");
      }
      collector.stdin.end();
      await exited;
      expect(Number(out)).toBeGreaterThan(0);
      // Every revision's frozen files are still there: the collector ran, and took none of them.
      for (const sha of runBlobRefs(home, readRun(g.runFile, home).state.run_id) ?? [])
        expect(statSync(path.join(g.home, "blobs", sha.slice(0, 2), sha)).isFile()).toBe(true);
    } finally {
      collector.kill("SIGKILL");
      await exited;
    }
  }, 120_000);
});
