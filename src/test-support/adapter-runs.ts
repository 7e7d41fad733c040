import { chmodSync, cpSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import type { ToolScope } from "../adapters/executor-gate.js";
import { bindPlannerSession } from "../gate/bind-session.js";
import { closeWorkflow } from "../gate/close-workflow.js";
import { raiseStop } from "../gate/hard-stops.js";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { bindTestSession } from "./bound-session.js";
import {
  admitStep,
  driveTo,
  EXECUTOR,
  freeze,
  frozenHash,
  type GateRun,
  homeOf,
  makeGateRun,
  PLANNER,
  storeOf,
  workflowOf,
} from "./run-fixture.js";
import { ALICE_KEY } from "./signed-run.js";

/** The old text of the files an executor's write tool edits in these runs. */
export const BEFORE = "package cart\n// before\n";
/** What the scripted model asks the write tool to write. */
export const WRITTEN = "package cart\n// written by the executor\n";

/** The write tool's scope every adapter test declares: it writes the file its `path` names. */
export const WRITE_SCOPES: Record<string, ToolScope> = { write_file: { writes: (i) => (i as { path: string }).path } };

/**
 * Writes through an SDK's own agent loop, with one gate made for the whole
 * run: its scripted model calls the `write_file` tool (input `{path,
 * content}`) once for each of `paths`, in turn, and then ends. The tool's own
 * body (run only on an allowed call) writes the file and then awaits
 * `onWritten`, which is where a test changes the run between two calls.
 * `each` is what each call answered the model (its output, or the error the
 * SDK showed it); `shown` is all of them.
 */
export type RunWrite = (o: {
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
  paths: string[];
  content: string;
  scopes: Record<string, ToolScope>;
  onWritten?: () => Promise<void>;
}) => Promise<{ shown: string; each: string[] }>;

/** A run of the demo pair consented and not yet admitted, its folder holding the demo targets (cart/cache.go) and a file outside them (cart/other.go). */
export async function consentedRun(o: { planners?: string[] } = {}): Promise<{ g: GateRun; target: string; outside: string }> {
  const g = makeGateRun();
  await driveTo(g, "dry_run_ready", { planners: o.planners });
  const dir = realpathSync(g.dir);
  mkdirSync(path.join(dir, "cart"), { recursive: true });
  const target = path.join(dir, "cart", "cache.go");
  const outside = path.join(dir, "cart", "other.go");
  writeFileSync(target, BEFORE);
  writeFileSync(outside, BEFORE);
  return { g, target, outside };
}

/** Admit MD-30 and bind its session as `twinlock exec` would, this test process standing for the agent below it. */
export async function admitAndBind(g: GateRun) {
  const r = await admitStep(g);
  if (!r.admitted) throw new Error(`admission failed: ${JSON.stringify(r.checks.filter((c) => !c.ok))}`);
  return bindTestSession(g);
}

/**
 * The executor scenarios every adapter must hold, each run through the SDK's
 * own loop by `runWrite`: denied before admission, allowed inside a target
 * after it, denied outside, denied once the approved bytes changed, denied
 * after a stop, and denied when the adapter itself fails.
 */
export function executorScenarios(runWrite: RunWrite): void {
  const write = (g: GateRun, env: NodeJS.ProcessEnv, file: string, scopes = WRITE_SCOPES) =>
    runWrite({ env, home: g.home, cwd: realpathSync(g.dir), paths: [file], content: WRITTEN, scopes });
  /** One allowed write of `target`, then `change`, then the agent's next write of it, all in one agent run through one gate. */
  const writeChangeWrite = async (g: GateRun, env: NodeJS.ProcessEnv, target: string, change: () => Promise<void>) => {
    let changed = false;
    const r = await runWrite({
      env,
      home: g.home,
      cwd: realpathSync(g.dir),
      paths: [target, target],
      content: WRITTEN,
      scopes: WRITE_SCOPES,
      onWritten: async () => {
        if (changed) return;
        changed = true;
        await change();
        writeFileSync(target, BEFORE);
      },
    });
    expect(changed).toBe(true);
    expect(r.each).toHaveLength(2);
    expect(readFileSync(target, "utf8")).toBe(BEFORE);
    return r.each[1] as string;
  };

  it("denies the executor's write before the run is admitted, and the tool never runs", async () => {
    const { g, target } = await consentedRun();
    const env = { TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: EXECUTOR, TWINLOCK_SESSION: "5".repeat(64) };
    const { shown } = await write(g, env, target);
    expect(shown).toMatch(/twinlock: (write_file|Write) denied: no session of MD-30/);
    expect(readFileSync(target, "utf8")).toBe(BEFORE);
  });

  it("allows a write inside an admitted action's target once admitted, by relative path too", async () => {
    const { g, target } = await consentedRun();
    const { env } = await admitAndBind(g);
    await write(g, env, target);
    expect(readFileSync(target, "utf8")).toBe(WRITTEN);
    writeFileSync(target, BEFORE);
    await write(g, env, "cart/cache.go");
    expect(readFileSync(target, "utf8")).toBe(WRITTEN);
  });

  it("denies a write outside the admitted targets, through .. as well", async () => {
    const { g, outside } = await consentedRun();
    const { env } = await admitAndBind(g);
    expect((await write(g, env, outside)).shown).toMatch(/outside the admitted plan's targets/);
    expect((await write(g, env, "cart/../cart/other.go")).shown).toMatch(/outside the admitted plan's targets/);
    expect(readFileSync(outside, "utf8")).toBe(BEFORE);
  });

  it("denies every write once the approved bytes in the checkout changed", async () => {
    const { g, target } = await consentedRun();
    const { env, binding } = await admitAndBind(g);
    const file = path.join(binding.checkout_dir as string, "report.md");
    chmodSync(file, 0o644);
    writeFileSync(file, `${readFileSync(file, "utf8")}\none more step\n`);
    expect((await write(g, env, target)).shown).toMatch(/edited since it was approved/);
    expect(readFileSync(target, "utf8")).toBe(BEFORE);
  });

  it("denies every write after a person raises a stop", async () => {
    const { g, target } = await consentedRun();
    const { env } = await admitAndBind(g);
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "alice" });
    expect((await write(g, env, target)).shown).toMatch(/no session of MD-30/);
    expect(readFileSync(target, "utf8")).toBe(BEFORE);
  });

  it("denies the call when the adapter itself fails (a scope that throws, a gate home that is not there)", async () => {
    const { g, target } = await consentedRun();
    const { env } = await admitAndBind(g);
    const broken: Record<string, ToolScope> = {
      write_file: {
        writes: () => {
          throw new Error("scope exploded");
        },
      },
    };
    expect((await write(g, env, target, broken)).shown).toMatch(/scope exploded/);
    const missing = await runWrite({
      env,
      home: path.join(g.dir, "no-home"),
      cwd: g.dir,
      paths: [target],
      content: WRITTEN,
      scopes: WRITE_SCOPES,
    });
    expect(missing.shown).toMatch(/twinlock: (write_file|Write) denied: gate home .* cannot be read/);
    expect((await write(g, env, target, {})).shown).toMatch(/not a tool the twinlock hook knows/);
    expect(readFileSync(target, "utf8")).toBe(BEFORE);
  });

  // After one allowed call through the same gate: a judgement kept from that call must not outlive the change.
  it("denies the next call once the agent rewrote an approved file of its checkout after an allowed call, naming the file", async () => {
    const { g, target } = await consentedRun();
    const { env, binding } = await admitAndBind(g);
    const file = path.join(binding.checkout_dir as string, "action_plan.json");
    const next = await writeChangeWrite(g, env, target, async () => {
      chmodSync(file, 0o644);
      writeFileSync(file, readFileSync(file, "utf8").replace(/"risk": "low"/g, '"risk": "high"'));
    });
    expect(next).toMatch(/the checkout's action_plan\.json was edited since it was approved: it no longer holds the approved hash sha256:/);
  });

  it("denies the next call once the run was re-frozen after an allowed call (another pair's handoff frozen), naming the freeze", async () => {
    const { g, target } = await consentedRun({ planners: ["MD-27", PLANNER] });
    const { env } = await admitAndBind(g);
    const other = path.join(g.dir, "handoff-md-27");
    cpSync(g.handoff, other, { recursive: true });
    const next = await writeChangeWrite(g, env, target, async () => {
      await freeze(g, { planner: "MD-27", handoff: other });
    });
    expect(next).toMatch(/was written since the session was bound: MD-27's handoff was frozen again \(revision 1, sha256:/);
  });

  it("denies the next call once a person raised a stop after an allowed call, naming the stop", async () => {
    const { g, target } = await consentedRun();
    const { env } = await admitAndBind(g);
    const next = await writeChangeWrite(g, env, target, async () => {
      await raiseStop({ store: storeOf(g), run: g.runFile, reason: "halt", actor: "alice" });
    });
    expect(next).toMatch(/no session of MD-30 .*: the session was ended at .*: !STOP:halt was raised on the run by alice/);
  });

  it("denies the next call once the pair was closed after an allowed call, naming the close", async () => {
    const { g, target } = await consentedRun();
    const { env } = await admitAndBind(g);
    const next = await writeChangeWrite(g, env, target, async () => {
      await closeWorkflow({
        run: g.runFile,
        store: storeOf(g),
        planner: PLANNER,
        result: "failed",
        residual: "the fix did not hold",
        actor: "alice",
      });
    });
    expect(next).toMatch(/was written since the session was bound: MD-29 was closed \(failed\) by alice/);
  });
}

/**
 * A run in `investigating` with MD-29's planner session bound on its handoff
 * folder (this test process standing for the agent below `twinlock plan`).
 */
export async function boundPlannerRun(): Promise<{ g: GateRun; env: NodeJS.ProcessEnv }> {
  const g = makeGateRun();
  await driveTo(g, "investigating");
  const secret = "7".repeat(64);
  await bindPlannerSession({
    runFile: g.runFile,
    home: homeOf(g),
    store: storeOf(g),
    planner: PLANNER,
    handoffDir: g.handoff,
    projectDir: g.dir,
    pid: process.ppid,
    secret,
  });
  return { g, env: { TWINLOCK_RUN: g.runFile, TWINLOCK_PLANNER: PLANNER, TWINLOCK_SESSION: secret } };
}

/** A person's decision on the current revision, signed with alice's reviewer key, once the run shows it frozen. */
export async function decideWhenFrozen(g: GateRun, decision: "approved" | "changes_requested", feedback?: string): Promise<void> {
  // Until the planner's agent froze (its model's first step), within 20 s.
  for (let i = 0; i < 800 && workflowOf(g).handoff === null; i++) await new Promise((r) => setTimeout(r, 25));
  await reviewPairPlan({
    run: g.runFile,
    store: storeOf(g),
    planner: PLANNER,
    decision,
    feedback,
    handoffHash: frozenHash(g),
    reviewer: "alice",
    key: ALICE_KEY,
  });
}
