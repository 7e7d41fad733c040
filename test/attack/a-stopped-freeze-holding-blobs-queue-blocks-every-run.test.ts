/**
 * The attack: the agent runs `freeze-pair-handoff` on its own run and
 * SIGSTOPs it at the moment it takes its share of the home's quota (its
 * reservation, or its claim on the bytes it is about to store; a probe freeze
 * killed after a few seconds tells it when it got there). While the quota
 * was taken under the home-wide `blobs.queue`, the stopped holder was never
 * passed, so every freeze of every other run of the home waited for it and
 * was refused for as long as the agent kept the process stopped. The quota
 * now takes no lock: a stopped freeze holds its own bytes and nothing else.
 * SECURITY.md's table says other runs' freezes go on.
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { withBlobsLock } from "../../src/home/frozen-quota.js";
import { readRun } from "../../src/home/run-ledger.js";
import { driveTo, freeze, homeOf, makeGateRun, removeGateRuns } from "../../src/test-support/run-fixture.js";
import { stoppedClaimant } from "../../src/test-support/stopped-claimant.js";

const children: ChildProcess[] = [];
afterAll(removeGateRuns);
afterEach(() => {
  delete process.env.TWINLOCK_LOCK_WAIT_MS;
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    c.kill("SIGCONT");
    c.kill("SIGKILL");
  }
});

describe("another run's freeze while the agent's freeze is stopped", () => {
  it("goes through while a process is stopped holding blobs.queue (which a freeze no longer takes)", async () => {
    const a = makeGateRun();
    const b = makeGateRun();
    await driveTo(a, "investigating");
    await driveTo(b, "investigating");
    // A holder of blobs.queue stopped inside it (a live process: its ticket is never passed).
    let release = () => {};
    let entered = () => {};
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const stoppedHolder = withBlobsLock(homeOf(a), () => {
      entered();
      return new Promise<void>((r) => {
        release = r;
      });
    });
    await inside;
    // How long the other run's freeze would wait changes nothing but how soon it would be refused.
    process.env.TWINLOCK_LOCK_WAIT_MS = "200";
    const frozenB = await freeze(b).then(
      (f) => f.workflow.state as string,
      (error: Error) => error.message,
    );
    release();
    await stoppedHolder;
    expect(frozenB).toBe("plan_review_pending");
  });

  it("goes through while the agent's freeze is stopped with its bytes reserved and claimed, and then so does the agent's own", async () => {
    const a = makeGateRun();
    const b = makeGateRun();
    await driveTo(a, "investigating");
    await driveTo(b, "investigating");
    const home = homeOf(a);
    const runA = readRun(a.runFile, home).state.run_id;
    const claimant = await stoppedClaimant(home, runA, 64 * 1024);
    children.push(claimant);
    process.env.TWINLOCK_LOCK_WAIT_MS = "200";
    expect((await freeze(b)).workflow.state).toBe("plan_review_pending");
    // The stopped freeze holds no lock of its own run either: another freeze of run A goes through beside it.
    expect((await freeze(a)).workflow.state).toBe("plan_review_pending");
    expect(claimant.signalCode).toBeNull();
  });
});
