import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bundleForChild } from "../test-support/child-module.js";
import { killChildren } from "../test-support/kill-children.js";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { withQueueLock } from "./queue-lock.js";

const children: ChildProcess[] = [];
afterEach(async () => {
  await killChildren(children);
});
afterAll(removeTempDirs);

/** queue-lock.ts as one plain module the child processes import (bundled once for the file). */
let lockModule = "";
beforeAll(async () => {
  lockModule = await bundleForChild(fileURLToPath(new URL("./queue-lock.ts", import.meta.url)), makeTempDir());
});

/** A Node process running `script` (an ES module whose `withQueueLock` is this source's), tracked for the cleanup. */
function lockProcess(script: string[], stdin: "pipe" | "ignore"): { child: ChildProcess; exited: Promise<number | null> } {
  const lines = [`const { withQueueLock } = await import(${JSON.stringify(lockModule)});`, ...script];
  const child = spawn(process.execPath, ["--input-type=module", "-e", lines.join("\n")], { stdio: [stdin, "pipe", "pipe"] });
  children.push(child);
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, exited };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The ticket names in a queue folder, of one pid when given. */
function tickets(dir: string, pid?: number): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => n.startsWith("t-") && (pid === undefined || n.split("-")[3] === String(pid)));
}

/** Wait, by polling the folder, until `pid` holds a ticket in the queue (it has asked for the lock). */
async function untilQueued(dir: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (tickets(dir, child.pid).length > 0) return;
    if (child.exitCode !== null) throw new Error(`child ${child.pid} exited (${child.exitCode}) before asking for the lock`);
    await sleep(5);
  }
  throw new Error(`child ${child.pid} never asked for the lock`);
}

/**
 * A separate Node process that asks for the lock of `dir` through
 * `withQueueLock` once its stdin says "go", and, holding it, appends `name` to `log`.
 */
function waiterProcess(
  dir: string,
  log: string,
  name: string,
  options: { lookMs?: number } = {},
): { child: ChildProcess; exited: Promise<number | null> } {
  return lockProcess(
    [
      `import { appendFileSync } from "node:fs";`,
      `process.stdin.once("data", async () => {`,
      `  await withQueueLock(${JSON.stringify(dir)}, () => appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(`${name}\n`)}), undefined, ${JSON.stringify(options)});`,
      `  process.exit(0);`,
      `});`,
      `process.stdout.write("ready\\n");`,
    ],
    "pipe",
  );
}

async function ready(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      if (d.toString().includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`waiter exited (${code}) before it was ready`)));
  });
}

/** Hold the lock of `dir` in this process until the returned release is called. */
async function holdHere(dir: string): Promise<{ release: () => void; done: Promise<void> }> {
  let release = () => {};
  let entered = () => {};
  const inside = new Promise<void>((r) => {
    entered = r;
  });
  const done = withQueueLock(dir, () => {
    entered();
    return new Promise<void>((r) => {
      release = r;
    });
  });
  await inside;
  return { release: () => release(), done };
}

describe("withQueueLock", () => {
  /**
   * Waiter processes `names` queue behind a holder here, each asking only once the one before it is queued (so the
   * order they asked in is the order of `names`); the holder leaves, and each records its name holding the lock.
   */
  async function queueInOrder(names: string[], options: { lookMs?: number } = {}): Promise<void> {
    const root = makeTempDir();
    const dir = path.join(root, "run.queue");
    const log = path.join(root, "log");
    writeFileSync(log, "");
    const waiters = names.map((n) => waiterProcess(dir, log, n, options));
    await Promise.all(waiters.map((w) => ready(w.child)));
    const holder = await holdHere(dir);
    for (const w of waiters) {
      w.child.stdin?.write("go\n");
      await untilQueued(dir, w.child);
    }
    holder.release();
    await holder.done;
    expect(await Promise.all(waiters.map((w) => w.exited))).toEqual(names.map(() => 0));
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(names);
    expect(tickets(dir)).toEqual([]);
  }

  it("serves 5 processes in the order they asked for the lock, as each records in a shared sequence", async () => {
    await queueInOrder(["p0", "p1", "p2", "p3", "p4"]);
  });

  it("wakes each waiting process as the one before it leaves, in the order they asked, though none of them looks again for an hour", async () => {
    // Their looks an hour apart: only the watch of the queue folder can let them in before the test's time is up.
    await queueInOrder(["w0", "w1", "w2"], { lookMs: 3_600_000 });
  });

  it("does not let a waiter killed in the queue block the ones behind it", async () => {
    const root = makeTempDir();
    const dir = path.join(root, "run.queue");
    const log = path.join(root, "log");
    writeFileSync(log, "");
    const doomed = waiterProcess(dir, log, "doomed");
    const next = waiterProcess(dir, log, "next");
    await Promise.all([ready(doomed.child), ready(next.child)]);
    const holder = await holdHere(dir);
    doomed.child.stdin?.write("go\n");
    await untilQueued(dir, doomed.child);
    next.child.stdin?.write("go\n");
    await untilQueued(dir, next.child);
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    holder.release();
    await holder.done;
    expect(await next.exited).toBe(0);
    expect(readFileSync(log, "utf8")).toBe("next\n");
    expect(tickets(dir)).toEqual([]);
  });

  it("wakes the waiter behind a waiter killed in the queue as the holder leaves, though it never looks again for an hour", async () => {
    // Its predecessor's ticket stays when it is killed: only the holder's hand-over (removing it) can let the next in.
    const root = makeTempDir();
    const dir = path.join(root, "run.queue");
    const log = path.join(root, "log");
    writeFileSync(log, "");
    const doomed = waiterProcess(dir, log, "doomed", { lookMs: 3_600_000 });
    const next = waiterProcess(dir, log, "next", { lookMs: 3_600_000 });
    await Promise.all([ready(doomed.child), ready(next.child)]);
    const holder = await holdHere(dir);
    doomed.child.stdin?.write("go\n");
    await untilQueued(dir, doomed.child);
    next.child.stdin?.write("go\n");
    await untilQueued(dir, next.child);
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    expect(tickets(dir, doomed.child.pid)).toHaveLength(1);
    holder.release();
    await holder.done;
    expect(await next.exited).toBe(0);
    expect(readFileSync(log, "utf8")).toBe("next\n");
    expect(tickets(dir)).toEqual([]);
  });

  it("lets one process at a time hold the lock when processes race for it, each adding to a count it reads and writes back", async () => {
    // Each turn reads the count, waits a little, and writes it plus one: two holders at once would lose an addition.
    const root = makeTempDir();
    const dir = path.join(root, "run.queue");
    const count = path.join(root, "count");
    writeFileSync(count, "0");
    const racers = Array.from({ length: 5 }, () =>
      lockProcess(
        [
          `import { readFileSync, writeFileSync } from "node:fs";`,
          `for (let i = 0; i < 8; i++)`,
          `  await withQueueLock(${JSON.stringify(dir)}, async () => {`,
          `    const n = Number(readFileSync(${JSON.stringify(count)}, "utf8"));`,
          `    await new Promise((r) => setTimeout(r, Math.random() * 3));`,
          `    writeFileSync(${JSON.stringify(count)}, String(n + 1));`,
          `  });`,
        ],
        "ignore",
      ),
    );
    expect(await Promise.all(racers.map((r) => r.exited))).toEqual([0, 0, 0, 0, 0]);
    expect(readFileSync(count, "utf8")).toBe("40");
    expect(tickets(dir)).toEqual([]);
  });

  it("takes over at once from a holder killed while holding the lock", async () => {
    const root = makeTempDir();
    const dir = path.join(root, "run.queue");
    const log = path.join(root, "log");
    writeFileSync(log, "");
    // A holder that never leaves: it is killed inside.
    const { child, exited } = lockProcess(
      [`await withQueueLock(${JSON.stringify(dir)}, () => new Promise(() => { process.stdout.write("held\\n"); }));`],
      "ignore",
    );
    await new Promise<void>((resolve) => child.stdout?.on("data", (d: Buffer) => d.toString().includes("held") && resolve()));
    child.kill("SIGKILL");
    await exited;
    expect(tickets(dir, child.pid)).toHaveLength(1);
    await expect(withQueueLock(dir, () => "mine")).resolves.toBe("mine");
    expect(tickets(dir)).toEqual([]);
  });

  it("serves callers of one process in the order they called, one at a time", async () => {
    const dir = path.join(makeTempDir(), "run.queue");
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(3), { minLength: 2, maxLength: 12 }), async (pauses) => {
        const order: number[] = [];
        let inside = 0;
        let most = 0;
        await Promise.all(
          pauses.map((pause, i) =>
            withQueueLock(dir, async () => {
              inside++;
              most = Math.max(most, inside);
              order.push(i);
              await sleep(pause);
              inside--;
            }),
          ),
        );
        expect(most).toBe(1);
        expect(order).toEqual(pauses.map((_, i) => i));
      }),
      { numRuns: 25 },
    );
  });

  it("waits for a writer that holds the lock though its own ticket is older (it read the clock first and made the ticket late)", async () => {
    const dir = path.join(makeTempDir(), "run.queue");
    await withQueueLock(dir, () => undefined);
    // A live writer (this process) that looked when no older ticket was there, marked itself holder and entered.
    const host = createHash("sha256").update(os.hostname()).digest("hex").slice(0, 8);
    const stamp = (process.hrtime.bigint() + 10n ** 12n).toString().padStart(20, "0");
    const tail = `${stamp}-${host}-${process.pid}-${"0".repeat(16)}`;
    writeFileSync(path.join(dir, `t-${tail}`), "");
    writeFileSync(path.join(dir, `h-${tail}`), "");
    const events: string[] = [];
    const entered = withQueueLock(dir, () => {
      events.push("entered");
    });
    // Its ticket is the oldest, but the holder is inside: it waits until the holder has left.
    while (tickets(dir).length < 2) await sleep(5);
    await sleep(50);
    events.push("holder left");
    rmSync(path.join(dir, `h-${tail}`));
    rmSync(path.join(dir, `t-${tail}`));
    await entered;
    expect(events).toEqual(["holder left", "entered"]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("ignores entries it did not make and frees the lock when the section throws", async () => {
    const dir = path.join(makeTempDir(), "run.queue");
    await withQueueLock(dir, () => undefined);
    writeFileSync(path.join(dir, "junk"), "");
    await expect(
      withQueueLock(dir, () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    await expect(withQueueLock(dir, () => "again")).resolves.toBe("again");
    expect(readdirSync(dir)).toEqual(["junk"]);
  });

  it("refuses a lock whose folder's parent is gone, and makes nothing (a gate home removed under a writer is not rebuilt)", async () => {
    const root = path.join(makeTempDir(), "home");
    await expect(withQueueLock(path.join(root, "notify", "run.queue"), () => "held", "the outbox")).rejects.toThrow(
      /cannot lock the outbox: the folder .*notify is gone/,
    );
    expect(existsSync(root)).toBe(false);
  });
});
