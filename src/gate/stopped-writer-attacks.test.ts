import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hasBlob } from "../home/frozen-bytes.js";
import { homeFrozenUsage, storedBytes } from "../home/frozen-quota.js";
import type { GateHome } from "../home/gate-home.js";
import { readRun } from "../home/run-ledger.js";
import { pendingStopRequests, recordStopRequest } from "../home/stop-requests.js";
import { bundleForChild } from "../test-support/child-module.js";
import {
  admitStep,
  driveTo,
  editHandoff,
  freeze,
  homeOf,
  makeGateRun,
  makeRunTempDir,
  removeGateRuns,
  storeOf,
} from "../test-support/run-fixture.js";
import { stoppedClaimant } from "../test-support/stopped-claimant.js";
import { raiseStop } from "./hard-stops.js";

/**
 * The attack: the agent starts a twinlock writer, lets it take a lock in the
 * gate home, and SIGSTOPs it. Its ticket stays live (its process exists), so
 * every later writer of that run waits behind it.
 */
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    c.kill("SIGCONT");
    c.kill("SIGKILL");
  }
});
afterAll(removeGateRuns);

let lockModule = "";
beforeAll(async () => {
  lockModule = await bundleForChild(
    fileURLToPath(new URL("../store/queue-lock.ts", import.meta.url)),
    makeRunTempDir("twinlock-lock-child-"),
  );
});

/** A real writer process holding the queue lock of `dir` until killed, stopped by SIGSTOP once it holds it. */
async function stoppedHolder(dir: string): Promise<ChildProcess> {
  const script = [
    `const { withQueueLock } = await import(${JSON.stringify(lockModule)});`,
    `await withQueueLock(${JSON.stringify(dir)}, () => new Promise(() => { console.log("held"); setInterval(() => {}, 1 << 30); }));`,
  ].join("\n");
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (b: Buffer) => {
      if (b.toString().includes("held")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before it held the lock`)));
  });
  child.kill("SIGSTOP");
  return child;
}

/** The bytes a freeze of a handoff folder would add to the home: its files' bytes on disk that the home does not store yet. */
function newBytes(home: GateHome, dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !hasBlob(home, createHash("sha256").update(readFileSync(f)).digest("hex")))
    .reduce((sum, f) => sum + storedBytes(lstatSync(f)), 0);
}

describe("a person's stop behind a writer the agent stopped", () => {
  it("is recorded in the gate home at once, refuses admission, and is written into the chain once the lock is free", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const holder = await stoppedHolder(path.join(home.dir, "runs", `${runId}.queue`));
    const raised = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "person", lockWaitMs: 50 });
    // Pending, naming the stopped process: in the home, outside the run folder the agent writes.
    expect(raised.pending).toMatch(
      new RegExp(`^run ${runId} is held by stopped process ${holder.pid} .*resume it \\(kill -CONT ${holder.pid}\\) or kill it`),
    );
    expect(pendingStopRequests(home, runId).map((r) => [r.reason, r.actor])).toEqual([["halt", "person"]]);
    expect(readdirSync(g.dir).some((n) => n.includes("stop"))).toBe(false);
    // Every read shows it standing; admission refuses it by the stop check, without waiting for the lock.
    expect((await storeOf(g).read(g.runFile)).state.stops.map((s) => [s.reason, s.resolved_at])).toEqual([["halt", null]]);
    const admission = await admitStep(g);
    expect(admission.admitted).toBe(false);
    expect(admission.checks.filter((c) => !c.ok).map((c) => c.detail)).toEqual([expect.stringMatching(/!STOP:halt/)]);
    // The holder gone, the next writer (one that decides nothing) writes the stop first: the chain has it, the request is removed.
    holder.kill("SIGCONT");
    holder.kill("SIGKILL");
    await new Promise((r) => holder.once("exit", r));
    await storeOf(g).update(g.runFile, () => ({ events: [], result: undefined }));
    const run = readRun(g.runFile, home);
    expect(run.file.events.filter((e) => e.type === "stop_raised").map((e) => [e.actor, e.data.reason])).toEqual([["person", "halt"]]);
    expect(pendingStopRequests(home, runId)).toEqual([]);
    expect(run.state.stops.map((s) => s.seq)).toEqual([run.file.events.findIndex((e) => e.type === "stop_raised") + 1]);
  });

  it("is written into the chain by the stop itself, numbered, when the lock is free", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const raised = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "person" });
    expect(raised.pending).toBeUndefined();
    expect(raised.stop).toBe(raised.file.revision);
    expect(raised.file.events.at(-1)).toMatchObject({ type: "stop_raised", actor: "person", data: { reason: "halt" } });
    expect(existsSync(path.join(homeOf(g).dir, "runs", `${raised.state.run_id}.stops`))).toBe(true);
    expect(pendingStopRequests(homeOf(g), raised.state.run_id)).toEqual([]);
  });

  it("writes a stop recorded while a decision was being made before it, and makes the decision again on the run with it", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const seen: number[] = [];
    await storeOf(g).update(g.runFile, (current) => {
      seen.push(current.state.stops.length);
      // A person's stop lands in the home while the first decision is made (its writer stopped between deciding and writing).
      if (seen.length === 1)
        recordStopRequest(home, { runId, reason: "halt", workflow: null, note: null, actor: "person", at: new Date() });
      return {
        events: [{ type: "stop_raised", actor: "agent", data: { reason: "later", workflow: null, note: null } }],
        result: undefined,
      };
    });
    expect(seen).toEqual([0, 1]);
    const run = readRun(g.runFile, home);
    expect(run.file.events.filter((e) => e.type === "stop_raised").map((e) => e.actor)).toEqual(["person", "agent"]);
  });
});

describe("a freeze behind a writer the agent stopped", () => {
  it("does not hold the home's blobs lock while it waits for its run's lock: another run's freeze goes through", async () => {
    const a = makeGateRun();
    const b = makeGateRun();
    await driveTo(a, "investigating");
    await driveTo(b, "investigating");
    const home = homeOf(a);
    const holder = await stoppedHolder(path.join(home.dir, "runs", `${readRun(a.runFile, home).state.run_id}.queue`));
    // Run A's freeze copies its handoff, then waits behind the stopped writer for run A's lock.
    let aSettled = false;
    const frozenA = freeze(a).finally(() => {
      aSettled = true;
    });
    const frozenB = await freeze(b);
    expect(frozenB.workflow.state).toBe("plan_review_pending");
    expect(aSettled).toBe(false);
    holder.kill("SIGCONT");
    holder.kill("SIGKILL");
    // The holder gone, run A's freeze takes its turn and lands too.
    expect((await frozenA).workflow.state).toBe("plan_review_pending");
  });

  it("names the stopped process whose claim takes the home's last bytes, and of two freezes racing for the last bytes keeps exactly one", async () => {
    const a = makeGateRun();
    const b = makeGateRun();
    await driveTo(a, "investigating");
    await driveTo(b, "investigating");
    const home = homeOf(a);
    // The agent's freeze of run B, stopped with 64 KiB claimed: room in the home for run A's freeze beside what it
    // holds, not beside that claim too.
    const claimed = 64 * 1024;
    const claimant = await stoppedClaimant(home, readRun(b.runFile, home).state.run_id, claimed);
    children.push(claimant);
    editHandoff(a, "a");
    const settings = path.join(home.dir, "settings.json");
    const fits = homeFrozenUsage(home).bytes + newBytes(home, a.handoff);
    writeFileSync(settings, JSON.stringify({ format: "twinlock-home-settings/1", frozen_bytes_per_home: fits + claimed - 1 }));
    try {
      await expect(freeze(a)).rejects.toThrow(
        new RegExp(
          `per gate home \\(frozen_bytes_per_home.*process ${claimant.pid}, whose freeze is storing some of those bytes, is stopped: resume it \\(kill -CONT ${claimant.pid}\\) or kill it`,
        ),
      );
    } finally {
      rmSync(settings, { force: true });
    }
    claimant.kill("SIGCONT");
    claimant.kill("SIGKILL");
    await new Promise((r) => claimant.once("exit", r));
    // Two handoffs that differ in one file of the same size: room in the home for one of those files, not both.
    editHandoff(a, "a");
    editHandoff(b, "b");
    const room = homeFrozenUsage(home).bytes + Math.max(newBytes(home, a.handoff), newBytes(home, b.handoff));
    writeFileSync(
      path.join(home.dir, "settings.json"),
      JSON.stringify({ format: "twinlock-home-settings/1", frozen_bytes_per_home: room }),
    );
    try {
      const results = await Promise.allSettled([freeze(a), freeze(b)]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected").map((r) => (r.reason as Error).message);
      expect(refused[0]).toMatch(/over the limit of .* per gate home \(frozen_bytes_per_home/);
    } finally {
      rmSync(path.join(home.dir, "settings.json"), { force: true });
    }
  });
});
