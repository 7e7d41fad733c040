/*
 * exec's and plan's sandbox has a PID namespace of its own: a confined
 * process sees and signals only the sandbox's processes, and the hook,
 * whose walk up its parents ends at the sandbox's first process, still
 * finds its session through the PID namespace the binder recorded. A hook
 * run with the session's variables in another PID namespace (another
 * sandbox, not the session's) is denied.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findBubblewrap } from "../../src/sandbox/find-bubblewrap.js";
import { driveTo, makeGateRun, PLANNER, removeGateRuns } from "../../src/test-support/run-fixture.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

beforeAll(ensureBuilt, 180_000);
afterAll(() => removeGateRuns());
const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** The confined command: what it sees of /proc, whether it reaches a process outside, and the hook's answer to a Write in the handoff folder. */
const AGENT = `
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const [bin, outside, handoff] = process.argv.slice(2);
let signal = "reached";
try { process.kill(Number(outside), 0); } catch (e) { signal = e.code; }
const call = { hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: handoff + "/report.md", content: "x" }, cwd: process.cwd() };
const hook = spawnSync(process.execPath, [bin, "hook", "claude", "--home", process.env.TWINLOCK_HOME], { input: JSON.stringify(call), encoding: "utf8" });
const seen = {
  pids: fs.readdirSync("/proc").filter((n) => /^[0-9]+$/.test(n)).map(Number),
  signal,
  hook: { status: hook.status, stdout: hook.stdout, stderr: hook.stderr },
  env: { TWINLOCK_RUN: process.env.TWINLOCK_RUN, TWINLOCK_PLANNER: process.env.TWINLOCK_PLANNER, TWINLOCK_SESSION: process.env.TWINLOCK_SESSION },
  call,
};
fs.writeFileSync(handoff + "/seen.json.tmp", JSON.stringify(seen));
fs.renameSync(handoff + "/seen.json.tmp", handoff + "/seen.json");
while (!fs.existsSync(handoff + "/go")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
`;

const bwrap = findBubblewrap();
describe.skipIf(!bwrap.ok)(`the sandbox's PID namespace${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`, () => {
  it("hides and shields every process outside from the confined command, and its hook still finds the planner's session; the same call from another PID namespace is denied", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const handoff = realpathSync(g.handoff);
    const agent = path.join(g.dir, "agent.cjs");
    writeFileSync(agent, AGENT);
    const outside = spawn("/bin/sh", ["-c", "sleep 60"], { stdio: "ignore" });
    started.push(outside);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, TWINLOCK_HOME: g.home };
    const plan = spawn(
      process.execPath,
      [
        DIST_BIN,
        "plan",
        g.runFile,
        PLANNER,
        "--handoff",
        "handoff",
        "--sandbox",
        "--",
        process.execPath,
        agent,
        DIST_BIN,
        String(outside.pid),
        handoff,
      ],
      { cwd: g.dir, env, stdio: ["ignore", "ignore", "pipe"] },
    );
    started.push(plan);
    let stderr = "";
    plan.stderr?.on("data", (d) => {
      stderr += d;
    });
    const ended = new Promise<number | null>((resolve) => plan.once("exit", (code) => resolve(code)));
    const seenFile = path.join(handoff, "seen.json");
    while (!existsSync(seenFile) && plan.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(seenFile), stderr).toBe(true);
    const seen = JSON.parse(readFileSync(seenFile, "utf8"));
    // Only the sandbox's own processes: its first (bwrap's), the command and what it started.
    expect(seen.pids).not.toContain(plan.pid);
    expect(seen.pids).not.toContain(outside.pid);
    expect(Math.max(...seen.pids)).toBeLessThan(100);
    // The PID of a process outside names nothing inside.
    expect(seen.signal).toBe("ESRCH");
    // The hook's walk ends inside the namespace; the binder's record of it binds the session.
    expect(seen.hook.status, seen.hook.stderr).toBe(0);
    expect(seen.hook.stdout).toBe("");
    // The same call, with the session's variables, from a sandbox of its own: not the session's PID namespace.
    const other = spawnSync(
      bwrap.ok ? bwrap.path : "bwrap",
      [
        "--unshare-user",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        process.execPath,
        DIST_BIN,
        "hook",
        "claude",
        "--home",
        g.home,
      ],
      { input: JSON.stringify(seen.call), encoding: "utf8", env: { ...env, ...seen.env } },
    );
    expect(other.status, other.stderr).toBe(0);
    expect(JSON.parse(other.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(/does not come from below the plan process/);
    writeFileSync(path.join(handoff, "go"), "");
    expect(await ended, stderr).toBe(0);
  }, 60_000);
});
