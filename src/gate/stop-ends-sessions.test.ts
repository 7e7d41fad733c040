import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { withCheckpointLock } from "../home/run-checkpoints.js";
import { readRun } from "../home/run-ledger.js";
import { bindingFile } from "../home/session-binding.js";
import { recordStopRequest } from "../home/stop-requests.js";
import { verifyBinding } from "../hook/verify-binding.js";
import { bindTestSession } from "../test-support/bound-session.js";
import { admitStep, driveTo, EXECUTOR, homeOf, makeGateRun, PLANNER, removeGateRuns, storeOf } from "../test-support/run-fixture.js";
import { sessionEnded } from "./bind-session.js";
import { raiseStop } from "./hard-stops.js";

afterAll(removeGateRuns);
afterEach(() => {
  vi.restoreAllMocks();
});

/** An admitted pair with its session bound, as `twinlock exec` leaves it; the session's secret and binding file. */
async function boundSession() {
  const g = makeGateRun();
  await driveTo(g, "dry_run_ready");
  await admitStep(g);
  const { binding, env } = await bindTestSession(g);
  return { g, binding, env, file: bindingFile(homeOf(g).dir, binding.run_file, "executor", EXECUTOR) };
}

describe("a stop and the bound session", () => {
  it("ends the executor's session and records the stop even while the agent holds a lock it planted beside the run file", async () => {
    const { g, env, file } = await boundSession();
    expect(verifyBinding(env, g.home, new Date()).ok).toBe(true);
    // The agent's planted lock: an owner that is alive (pid 1) and a folder kept fresh. The run's lock is the home's: ignored.
    const lockDir = `${g.runFile}.lock`;
    mkdirSync(lockDir);
    writeFileSync(path.join(lockDir, "owner"), JSON.stringify({ pid: 1, host: os.hostname(), token: "a" }));
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(lockDir, future, future);
    const run = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "person" });
    expect(run.state.stops.map((x) => x.reason)).toEqual(["halt"]);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(lockDir)).toBe(true);
  });

  it("ends the executor's session even while a write holds the run's lock past the wait, and the stop stands in the gate home", async () => {
    const { g, env, file } = await boundSession();
    expect(verifyBinding(env, g.home, new Date()).ok).toBe(true);
    const runId = readRun(g.runFile, homeOf(g)).state.run_id;
    let release = () => {};
    let entered = () => {};
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const holder = withCheckpointLock(homeOf(g), runId, () => {
      entered();
      return new Promise<void>((r) => {
        release = r;
      });
    });
    await inside;
    const raised = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "person", lockWaitMs: 1 });
    release();
    await holder;
    expect(raised.pending).toMatch(new RegExp(`^run ${runId} is locked by another twinlock process \\(pid ${process.pid}\\)`));
    expect(raised.state.stops.map((s) => s.reason)).toEqual(["halt"]);
    expect(readRun(g.runFile, homeOf(g)).state.stops.map((s) => s.reason)).toEqual(["halt"]);
    expect(existsSync(file)).toBe(false);
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: false, reason: expect.stringMatching(/^no session of MD-30/) });
  });

  it("ends only the named pair's session when the stop names a workflow, and every session of the run when it does not", async () => {
    const { g, env, file } = await boundSession();
    expect(verifyBinding(env, g.home, new Date())).toEqual(expect.objectContaining({ ok: true }));
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", workflow: "MD-99", actor: "person" }).catch(() => undefined);
    expect(existsSync(file)).toBe(true);
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", workflow: PLANNER, actor: "person" });
    expect(existsSync(file)).toBe(false);
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: false, reason: expect.stringMatching(/^no session of MD-30/) });
  });

  it("binds no session when a stop was raised between the admission and the binding (the stop is then inside the checkpoint)", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    await admitStep(g);
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "person" });
    const binding = bindTestSession(g, { secret: "6".repeat(64) });
    await expect(binding).rejects.toThrow(/^!STOP:halt is open on the run: MD-30's session is not bound/);
    const bindings = path.join(homeOf(g).dir, "bindings");
    expect(existsSync(bindings) ? readdirSync(bindings).filter((f) => f.endsWith(".json")) : []).toEqual([]);
  });

  it("denies the bound session while a stop is recorded in the gate home and not yet in the chain, before the stop ends it", async () => {
    const { g, binding, env } = await boundSession();
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;
    // The stop's first step (its request in the home) done, its second (ending the run's sessions) not yet.
    recordStopRequest(home, { runId, reason: "halt", workflow: null, note: null, actor: "person", at: new Date() });
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^a stop of run run_[0-9a-f]{16} is recorded in the gate home and waits/),
    });
    expect(sessionEnded(binding, await storeOf(g).read(g.runFile))).toBe("!STOP:halt was raised on the run");
  });
});
