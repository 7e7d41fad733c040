import { readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { demoHandoffRecords } from "../demo/demo-handoff.js";
import { processIdentity } from "../home/process-identity.js";
import { bindingFile, LEASE_MS, type SessionBinding } from "../home/session-binding.js";
import { renewSessionBinding } from "../home/write-session-binding.js";
import { verifyBinding } from "../hook/verify-binding.js";
import { bindTestSession } from "../test-support/bound-session.js";
import {
  admitStep,
  driveTo,
  EXECUTOR,
  type GateRun,
  homeOf,
  makeGateRun,
  makeRunTempDir,
  PLANNER,
  removeGateRuns,
  storeOf,
} from "../test-support/run-fixture.js";
import { bindPlannerSession, sessionEnded } from "./bind-session.js";
import { raiseStop } from "./hard-stops.js";

afterAll(removeGateRuns);

const SECRET = "7".repeat(64);

/** Bind MD-29's planner session on `g` as `twinlock plan` does, this test process standing for the agent below it. */
async function bindPlanner(g: GateRun, o: { handoff?: string | null; project?: string } = {}) {
  const binding = await bindPlannerSession({
    runFile: g.runFile,
    home: homeOf(g),
    store: storeOf(g),
    planner: PLANNER,
    handoffDir: o.handoff === null ? undefined : (o.handoff ?? g.handoff),
    projectDir: o.project ?? g.dir,
    pid: process.ppid,
    secret: SECRET,
  });
  const env = { TWINLOCK_RUN: g.runFile, TWINLOCK_PLANNER: PLANNER, TWINLOCK_SESSION: SECRET };
  return { binding, env, file: bindingFile(homeOf(g).dir, binding.run_file, "planner", PLANNER) };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => "bound",
    (e: Error) => e.message,
  );

describe("binding a planner's session", () => {
  it("binds before the first freeze in the handoff folder given, and the hook then knows it as the planner's", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const { binding, env } = await bindPlanner(g);
    expect(binding).toMatchObject({ kind: "planner", planner: PLANNER, executor: EXECUTOR, handoff_dir: g.handoff, targets: [] });
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: true });
  });

  it("needs a handoff folder before the first freeze, and keeps to the frozen one after it", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    expect(await refusal(bindPlanner(g, { handoff: null }))).toMatch(/frozen nothing yet.*--handoff DIR/);
    await driveTo(g, "plan_revision_pending", { create: false });
    const { binding } = await bindPlanner(g, { handoff: null });
    expect(binding.handoff_dir).toBe(g.handoff);
    expect(await refusal(bindPlanner(g, { handoff: g.dir }))).toMatch(/froze .* before/);
  });

  it("refuses a handoff folder that holds the project, the run file, or is reached through a symbolic link", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    expect(await refusal(bindPlanner(g, { handoff: g.dir }))).toMatch(/holds the folder the session is started in/);
    expect(await refusal(bindPlanner(g, { handoff: g.dir, project: makeRunTempDir() }))).toMatch(/holds the run file/);
    symlinkSync(g.handoff, path.join(g.dir, "alias"));
    expect(await refusal(bindPlanner(g, { handoff: path.join(g.dir, "alias") }))).toMatch(/goes through a symbolic link/);
    expect(await refusal(bindPlanner(g, { handoff: homeOf(g).dir }))).toMatch(/gate home/);
  });

  it("refuses a handoff folder holding a target of the plan frozen last", async () => {
    const records = demoHandoffRecords();
    (records.actions.actions[0] as { target: string }).target = "handoff/cache_race_test.go";
    const g = makeGateRun({ records });
    await driveTo(g, "plan_review_pending");
    expect(await refusal(bindPlanner(g, { handoff: null }))).toMatch(
      /action A1's target handoff\/cache_race_test\.go is inside the handoff folder/,
    );
  });

  it("refuses a closed pair and a pair with an open stop", async () => {
    const closed = makeGateRun();
    await driveTo(closed, "closed");
    expect(await refusal(bindPlanner(closed))).toMatch(/workflow is closed/);
    const stopped = makeGateRun();
    await driveTo(stopped, "investigating");
    await raiseStop({ store: storeOf(stopped), run: stopped.runFile, reason: "halt", actor: "person" });
    expect(await refusal(bindPlanner(stopped))).toMatch(/!STOP:halt is open/);
  });
});

describe("a planner's session, as the hook checks it", () => {
  it("is not an executor's: the planner's secret under TWINLOCK_EXECUTOR, and both names at once, are refused", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    await admitStep(g);
    const { env } = await bindPlanner(g);
    const exec = await bindTestSession(g);
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: true, binding: { kind: "planner" } });
    expect(verifyBinding(exec.env, g.home, new Date())).toMatchObject({ ok: true, binding: { kind: "executor" } });
    // The planner's secret offered as the executor's session, and the executor's as the planner's.
    const asExecutor = { TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: EXECUTOR, TWINLOCK_SESSION: SECRET };
    expect(verifyBinding(asExecutor, g.home, new Date())).toMatchObject({ ok: false, reason: /not this binding's secret/ });
    const asPlanner = { ...exec.env, TWINLOCK_EXECUTOR: undefined, TWINLOCK_PLANNER: PLANNER };
    expect(verifyBinding(asPlanner, g.home, new Date())).toMatchObject({ ok: false, reason: /not this binding's secret/ });
    // The planner's ID named as an executor: no executor session of that ID.
    const plannerAsExecutor = { TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: PLANNER, TWINLOCK_SESSION: SECRET };
    expect(verifyBinding(plannerAsExecutor, g.home, new Date())).toMatchObject({ ok: false, reason: /no session of MD-29/ });
    expect(verifyBinding({ ...env, TWINLOCK_EXECUTOR: EXECUTOR }, g.home, new Date())).toMatchObject({ ok: false, reason: /both/ });
  });

  it("runs out when its lease is not renewed, and holds again once renewed", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const { binding, env, file } = await bindPlanner(g);
    const past = new Date(Date.now() - LEASE_MS - 5_000);
    utimesSync(file, past, past);
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: false, reason: /lease ran out/ });
    expect(await renewSessionBinding(homeOf(g), binding)).toBe(true);
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: true });
  });

  it("is refused when the process below which it runs is not the one that bound it (a PID reused after a SIGKILL)", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const { env, file } = await bindPlanner(g);
    const b = JSON.parse(readFileSync(file, "utf8")) as SessionBinding;
    expect(b.process).toEqual(processIdentity(process.ppid));
    if (b.process.start === null) return;
    writeFileSync(file, JSON.stringify({ ...b, process: { ...b.process, start: String(Number(b.process.start) + 1) } }));
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: false, reason: /its PID was given to another process/ });
    writeFileSync(file, JSON.stringify({ ...b, process: { ...b.process, boot_id: "another-boot" } }));
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: false, reason: /its PID was given to another process/ });
    writeFileSync(file, JSON.stringify({ ...b, process: processIdentity(process.pid) }));
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: false, reason: /does not come from below the plan process/ });
  });

  it("ends when a stop is raised (the stop removes it, and the keeper's re-check says why), but not on a freeze", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const { binding, env } = await bindPlanner(g);
    await driveTo(g, "plan_review_pending", { create: false });
    const frozen = await storeOf(g).read(g.runFile);
    expect(sessionEnded(binding, frozen)).toBeUndefined();
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: true });
    const stopped = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", workflow: PLANNER, actor: "person" });
    expect(sessionEnded(binding, stopped)).toMatch(/!STOP:halt was raised on MD-29/);
    expect(verifyBinding(env, g.home, new Date())).toMatchObject({ ok: false, reason: /no session of planner MD-29/ });
  });

  it("ends an executor's session on any write of the run, as the keeper judges it", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    await admitStep(g);
    const { binding } = await bindTestSession(g);
    expect(sessionEnded(binding, await storeOf(g).read(g.runFile))).toBeUndefined();
    const after = await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "person" });
    expect(sessionEnded(binding, after)).toMatch(/was written since the session was bound/);
  });
});
