/**
 * The agent against a person's stop: it plants a live-looking lock beside
 * the run file (its own folder) and keeps it fresh, so that a stop polling
 * behind it loses the race to the agent's own `admit`, started later. The
 * run's lock is the gate home's, a queue served in the order writers asked:
 * the lock beside the run file is ignored and the stop, queued first, lands first.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { withCheckpointLock } from "../../src/home/run-checkpoints.js";
import { readRun } from "../../src/home/run-ledger.js";
import { killChildren } from "../../src/test-support/kill-children.js";
import { driveTo, EXECUTOR, homeOf, makeGateRun, removeGateRuns } from "../../src/test-support/run-fixture.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

const children: ChildProcess[] = [];
beforeAll(ensureBuilt, 180_000);
afterEach(async () => {
  await killChildren(children);
});
afterAll(removeGateRuns);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Proc {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function start(args: string[]): Proc {
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"], env: process.env });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return { child, out: () => out, exited: new Promise((r) => child.once("exit", (code) => r(code))) };
}

/**
 * The agent's process: it makes `RUN.lock` as a twinlock writer would (its
 * own live pid as owner) and refreshes it every 100 ms, until told to remove it.
 */
function plantLiveLock(runFile: string): Proc {
  const script = `
    const fs = require("node:fs"), path = require("node:path");
    const dir = ${JSON.stringify(`${runFile}.lock`)};
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "owner"), JSON.stringify({ pid: process.pid, host: ${JSON.stringify(os.hostname())}, token: "a9e17a9e17a9e17a" }));
    const fresh = setInterval(() => { const now = new Date(); fs.utimesSync(dir, now, now); }, 100);
    process.stdout.write("planted\\n");
    process.stdin.once("data", () => { clearInterval(fresh); fs.rmSync(dir, { recursive: true }); process.stdout.write("removed\\n"); });
  `;
  return start(["-e", script]);
}

async function until(what: string, ok: () => boolean, proc?: Proc): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (ok()) return;
    if (proc && proc.child.exitCode !== null) throw new Error(`${what}: the process exited (${proc.child.exitCode}): ${proc.out()}`);
    await sleep(5);
  }
  throw new Error(`${what}: never happened`);
}

/** Whether `pid` has asked for the home's lock of the run: it holds a ticket in the run's queue. */
function queued(home: string, runId: string, pid: number | undefined): boolean {
  const dir = path.join(home, "runs", `${runId}.queue`);
  return existsSync(dir) && readdirSync(dir).some((n) => n.startsWith("t-") && n.split("-")[3] === String(pid));
}

describe("a person's stop against the agent's lock planted beside the run file", () => {
  it("records the person's stop, queued before the agent's admit, at once: admit is refused by it without waiting, and the stop lands", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = homeOf(g);
    const runId = readRun(g.runFile, home).state.run_id;

    const agent = plantLiveLock(g.runFile);
    await until("the agent plants its lock", () => agent.out().includes("planted"), agent);

    // A write already in progress holds the run's lock while the two commands ask for it, in this order.
    const events: string[] = [];
    let finish = () => {};
    let entered = () => {};
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const holding = withCheckpointLock(home, runId, () => {
      entered();
      return new Promise<void>((r) => {
        finish = r;
      });
    });
    await inside;
    const stop = start([DIST_BIN, "stop", g.runFile, "--reason", "halt-now", "--actor", "alice", "--home", g.home]);
    await until("the stop asks for the run's lock", () => queued(g.home, runId, stop.child.pid), stop);
    events.push("stop queued");
    // The stop is recorded in the gate home before it waits its turn, so admit, asked for later, is refused by it at
    // once, without waiting behind the write in progress (it does not even queue for the run's lock).
    const admit = start([DIST_BIN, "admit", g.runFile, EXECUTOR, "--actor", "executor-agent", "--home", g.home]);
    const admitCode = await admit.exited;
    events.push(`admit exited ${admitCode}`);
    // The agent lets go of its planted lock, as it would to let admit through.
    agent.child.stdin?.write("go\n");
    await until("the agent removes its lock", () => agent.out().includes("removed"), agent);
    finish();
    await holding;

    const stopCode = await stop.exited;
    events.push(`stop exited ${stopCode}`);
    expect(stopCode, stop.out()).toBe(0);
    expect(admitCode, admit.out()).toBe(3);
    expect(admit.out()).toMatch(/FAIL {2}8 +no unresolved !STOP.*\n +!STOP:halt-now \(run\)/);
    // In the run: the stop was recorded and no admission after it (nor at all).
    const run = readRun(g.runFile, home).file;
    const types = run.events.map((e) => e.type);
    expect(types.at(-1)).toBe("stop_raised");
    expect(types).not.toContain("admitted");
    expect(events).toEqual(["stop queued", "admit exited 3", "stop exited 0"]);
  }, 120_000);

  it("never waits on a lock beside the run file: a stop lands while the agent keeps its planted lock fresh", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const agent = plantLiveLock(g.runFile);
    await until("the agent plants its lock", () => agent.out().includes("planted"), agent);
    const stop = start([DIST_BIN, "stop", g.runFile, "--reason", "halt-now", "--actor", "alice", "--home", g.home]);
    expect(await stop.exited, stop.out()).toBe(0);
    // The agent's lock is still there and fresh: the stop was not held up by it.
    expect(existsSync(`${g.runFile}.lock`)).toBe(true);
    expect(readRun(g.runFile, homeOf(g)).state.stops.map((s) => s.reason)).toEqual(["halt-now"]);
  }, 120_000);
});
