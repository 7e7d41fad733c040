/**
 * The attack: the executor is admitted and `twinlock exec` (the agent's own
 * process) has read the run to bind its session; the agent SIGSTOPs it there,
 * and holds the run's lock with another writer it SIGSTOPs. A person's `stop`
 * ends the run's sessions (there is none yet), records the stop in the gate
 * home and, the lock being held, returns "pending: stands from now on". The
 * agent resumes exec: its binding is written after the stop returned, bound to
 * the checkpoint as it still is (a pending stop changes no checkpoint), and
 * the hook, which checks only that checkpoint, lets the executor act; exec's
 * own re-check (`sessionEnded`) compares the revision only, so it renews the
 * lease too. The stop does not hold for as long as the agent's writer stays stopped.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bindSession, sessionEnded } from "../../src/gate/bind-session.js";
import { raiseStop } from "../../src/gate/hard-stops.js";
import { checkoutFrozenBytes } from "../../src/home/frozen-bytes.js";
import { withCheckpointLock } from "../../src/home/run-checkpoints.js";
import { readRun } from "../../src/home/run-ledger.js";
import { verifyBinding } from "../../src/hook/verify-binding.js";
import type { RunStore } from "../../src/store/run-store.js";
import {
  admitStep,
  driveTo,
  EXECUTOR,
  homeOf,
  makeGateRun,
  removeGateRuns,
  storeOf,
  workflowOf,
} from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

/** A promise and the function that settles it. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

describe("a session bind that was under way when a person's stop was left pending", () => {
  it("is not bound after the stop returned: the hook and exec's re-check refuse the session", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    expect((await admitStep(g)).admitted).toBe(true);
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    const checkout = path.join(g.dir, "checkout");
    checkoutFrozenBytes(home, workflowOf(g).handoff?.files ?? [], checkout);

    // exec, stopped by the agent right after it read the run (the store's read, then the SIGSTOP).
    const real = storeOf(g);
    const readDone = latch();
    const resumeExec = latch();
    const stoppedExecStore = new Proxy(real, {
      get(target, key, receiver) {
        if (key !== "read") return Reflect.get(target, key, receiver);
        return async (ref: string) => {
          const run = await target.read(ref);
          readDone.open();
          await resumeExec.promise;
          return run;
        };
      },
    }) as RunStore;
    const secret = "7".repeat(64);
    const binding = bindSession({
      runFile: g.runFile,
      home,
      store: stoppedExecStore,
      executor: EXECUTOR,
      checkoutDir: checkout,
      projectDir: g.dir,
      pid: process.ppid,
      secret,
    });
    await readDone.promise;

    // Another writer of the run, stopped by the agent while it holds the run's lock.
    const held = latch();
    const releaseLock = latch();
    const holder = withCheckpointLock(home, runId, () => {
      held.open();
      return releaseLock.promise;
    });
    await held.promise;

    // The person's stop: it returns, telling the person the stop stands from now on.
    const raised = await raiseStop({ store: real, run: g.runFile, reason: "halt", actor: "person", lockWaitMs: 1 });
    expect(raised.pending).toBeDefined();
    expect(raised.state.stops.map((s) => [s.reason, s.resolved_at])).toEqual([["halt", null]]);

    // The agent resumes exec (its other writer stays stopped).
    resumeExec.open();
    const bound = await binding.catch((error: Error) => error);
    try {
      const env = { TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: EXECUTOR, TWINLOCK_SESSION: secret };
      // The stop must hold: no session of this run may act after it returned.
      const hookAllows = verifyBinding(env, g.home, new Date()).ok;
      const execRenews = !(bound instanceof Error) && sessionEnded(bound, await real.read(g.runFile)) === undefined;
      expect({ hookAllows, execRenews }).toEqual({ hookAllows: false, execRenews: false });
    } finally {
      releaseLock.open();
      await holder;
    }
  });
});
