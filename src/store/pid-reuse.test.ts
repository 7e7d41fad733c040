import { createHash } from "node:crypto";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killStrangers, liveStranger, otherStart } from "../test-support/pid-stranger.js";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { removeLeftoversOfDeadWriters } from "./is-process-alive.js";
import { hasProcFs } from "./process-start.js";
import { withQueueLock } from "./queue-lock.js";
import { withFileLock } from "./run-file-lock.js";

afterAll(removeTempDirs);

const HOST = createHash("sha256").update(os.hostname()).digest("hex").slice(0, 8);
afterEach(killStrangers);
describe.runIf(hasProcFs())("an entry standing for a live process is known by its start time, not its PID alone", () => {
  it("enters a queue lock whose holder entry names a live PID with another start time, and removes that entry", async () => {
    const dir = makeTempDir("twinlock-pid-reuse-");
    const stranger = liveStranger();
    const entry = `h-${"0".repeat(19)}1-${HOST}-${stranger.pid}-${"a".repeat(16)}-${otherStart(stranger.tag)}`;
    writeFileSync(path.join(dir, entry), "");
    await expect(withQueueLock(dir, () => "entered", "the run", { waitMs: 30_000 })).resolves.toBe("entered");
    expect(existsSync(path.join(dir, entry))).toBe(false);
  });

  it("never passes a stopped holder whose entry records its very start time: the refusal names it stopped", async () => {
    const dir = makeTempDir("twinlock-pid-reuse-");
    const holder = liveStranger();
    process.kill(holder.pid, "SIGSTOP");
    const entry = `h-${"0".repeat(19)}1-${HOST}-${holder.pid}-${"b".repeat(16)}-${holder.tag}`;
    writeFileSync(path.join(dir, entry), "");
    await expect(withQueueLock(dir, () => "entered", "the run", { waitMs: 200, lookMs: 20 })).rejects.toMatchObject({
      details: { lock_wait: true, pid: holder.pid, stopped: true },
    });
    expect(existsSync(path.join(dir, entry))).toBe(true);
  });

  it("reclaims a leftover (a quota reservation) naming a live PID with another start time, and keeps the live one's", () => {
    const dir = makeTempDir("twinlock-pid-reuse-");
    const stranger = liveStranger();
    const reservation = /^(\d{1,10})-(\d{20})-([0-9a-f]{12})(?:-(?<tag>\d{1,20}-[0-9a-f]{8}))?\.json$/;
    const dead = `quota-${stranger.pid}-${"0".repeat(20)}-${"c".repeat(12)}-${otherStart(stranger.tag)}.json`;
    const live = `quota-${stranger.pid}-${"0".repeat(20)}-${"d".repeat(12)}-${stranger.tag}.json`;
    const old = `quota-${stranger.pid}-${"0".repeat(20)}-${"e".repeat(12)}.json`;
    for (const name of [dead, live, old]) writeFileSync(path.join(dir, name), "{}");
    removeLeftoversOfDeadWriters(dir, "quota-", reservation);
    expect([dead, live, old].map((n) => existsSync(path.join(dir, n)))).toEqual([false, true, true]);
  });

  it("takes over a run file's lock whose owner names a live PID with another start time, fresh as it looks", async () => {
    const dir = makeTempDir("twinlock-pid-reuse-");
    const file = path.join(dir, "run.json");
    writeFileSync(file, "{}");
    const stranger = liveStranger();
    const lockDir = `${file}.lock`;
    mkdirSync(lockDir);
    const owner = { pid: stranger.pid, host: os.hostname(), token: "f".repeat(16), tag: otherStart(stranger.tag) };
    writeFileSync(path.join(lockDir, "owner"), JSON.stringify(owner));
    // Refreshed an hour ahead: never stale, so only the owner's identity can free it (a PID alone waits 60 s, then fails).
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(lockDir, ahead, ahead);
    await expect(withFileLock(file, () => "entered")).resolves.toBe("entered");
  }, 20_000);
});
