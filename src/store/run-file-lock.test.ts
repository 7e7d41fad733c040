import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { ConflictError } from "../errors/errors.js";
import { killChildren } from "../test-support/kill-children.js";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { LOCK_WAIT_MS, withFileLock } from "./run-file-lock.js";

const children: ChildProcess[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await killChildren(children);
});
afterAll(removeTempDirs);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync("true");
  if (child.pid === undefined) throw new Error("could not start `true`");
  return child.pid;
}

/** A lock folder as a twinlock writer leaves it: the folder and its owner file. */
function plantLock(file: string, owner: { pid: number; host?: string; token?: string }, ageMs = 0): string {
  const lockDir = `${file}.lock`;
  mkdirSync(lockDir);
  writeFileSync(path.join(lockDir, "owner"), JSON.stringify({ host: os.hostname(), token: "0123456789abcdef", ...owner }));
  if (ageMs > 0) {
    const then = new Date(Date.now() - ageMs);
    utimesSync(lockDir, then, then);
  }
  return lockDir;
}

/** Start `withFileLock` and report whether its critical section has been entered yet. */
function startLocked(file: string) {
  const state = { entered: false };
  const done = withFileLock(file, () => {
    state.entered = true;
    return "done";
  });
  return { state, done };
}

/**
 * Start a separate Node process that takes the lock of `file` through
 * `withFileLock` (this source, loaded with tsx) and holds it until its stdin
 * closes. Resolves once it holds the lock.
 */
async function holdInChild(file: string): Promise<ChildProcess> {
  const source = fileURLToPath(new URL("./run-file-lock.ts", import.meta.url));
  const script = [
    `const { withFileLock } = await import(${JSON.stringify(source)});`,
    `await withFileLock(${JSON.stringify(file)}, () => new Promise((release) => {`,
    `  process.stdout.write("held\\n");`,
    `  process.stdin.on("data", () => {}).on("end", release);`,
    `}));`,
  ].join("\n");
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    stdio: ["pipe", "pipe", "pipe"],
    // tsx would otherwise leave its compile cache in the system temp folder.
    env: { ...process.env, TSX_DISABLE_CACHE: "1" },
  });
  children.push(child);
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      if (d.toString().includes("held")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`lock holder exited (${code}) before holding the lock: ${err}`)));
  });
  return child;
}

function runFileIn(dir: string): string {
  const file = path.join(dir, "run.json");
  writeFileSync(file, "{}");
  return file;
}

describe("withFileLock", () => {
  it("serialises two callers in one process: the second enters only after the first has left", async () => {
    const file = runFileIn(makeTempDir());
    const log: string[] = [];
    const section = (name: string) => async () => {
      log.push(`${name} in`);
      await sleep(50);
      log.push(`${name} out`);
    };
    const second = async () => {
      await sleep(5);
      return withFileLock(file, section("b"));
    };
    await Promise.all([withFileLock(file, section("a")), second()]);
    expect(log).toEqual(["a in", "a out", "b in", "b out"]);
  });

  it("loses no update among ten read-modify-write callers", async () => {
    const file = runFileIn(makeTempDir());
    writeFileSync(file, "0");
    await Promise.all(
      Array.from({ length: 10 }, () =>
        withFileLock(file, async () => {
          const n = Number(readFileSync(file, "utf8"));
          await sleep(Math.random() * 10);
          writeFileSync(file, String(n + 1));
        }),
      ),
    );
    expect(readFileSync(file, "utf8")).toBe("10");
  });

  it("holds a lock folder naming this process while the section runs, and removes it afterwards", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    const owner = await withFileLock(file, () => JSON.parse(readFileSync(`${file}.lock/owner`, "utf8")));
    expect(owner).toMatchObject({ pid: process.pid, host: os.hostname() });
    expect(owner.token).toMatch(/^[0-9a-f]{16}$/);
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it("returns the section's value and releases the lock when the section throws", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    await expect(withFileLock(file, () => 42)).resolves.toBe(42);
    await expect(
      withFileLock(file, () => {
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(readdirSync(dir)).toEqual(["run.json"]);
    await expect(withFileLock(file, () => "again")).resolves.toBe("again");
  });

  it("takes over at once a lock folder whose owner pid no longer exists", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    plantLock(file, { pid: deadPid() });
    const started = Date.now();
    await expect(withFileLock(file, () => "mine")).resolves.toBe("mine");
    // "At once": far inside the 10 s stale timeout the lock would otherwise need.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it("takes over at once an empty lock folder (a writer of an older twinlock killed while releasing)", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    mkdirSync(`${file}.lock`);
    const started = Date.now();
    await expect(withFileLock(file, () => "mine")).resolves.toBe("mine");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it("waits for a live owner, and proceeds as soon as it releases", async () => {
    const file = runFileIn(makeTempDir());
    const lockDir = plantLock(file, { pid: process.pid });
    const waiter = startLocked(file);
    await sleep(300);
    expect(waiter.state.entered).toBe(false);
    expect(existsSync(lockDir)).toBe(true);
    rmSync(lockDir, { recursive: true });
    await expect(waiter.done).resolves.toBe("done");
  });

  it("waits while the owning process lives, and takes over as soon as it dies", async () => {
    const file = runFileIn(makeTempDir());
    const holder = spawn("sleep", ["30"]);
    children.push(holder);
    plantLock(file, { pid: holder.pid as number });
    const waiter = startLocked(file);
    await sleep(300);
    expect(waiter.state.entered).toBe(false);
    const exited = new Promise((r) => holder.once("exit", r));
    holder.kill("SIGKILL");
    await exited;
    await expect(waiter.done).resolves.toBe("done");
  });

  it("does not judge another host's owner by pid: it waits while that lock is fresh", async () => {
    const file = runFileIn(makeTempDir());
    const lockDir = plantLock(file, { pid: deadPid(), host: `not-${os.hostname()}` });
    const waiter = startLocked(file);
    await sleep(300);
    expect(waiter.state.entered).toBe(false);
    rmSync(lockDir, { recursive: true });
    await expect(waiter.done).resolves.toBe("done");
  });

  it("takes over a lock that has not been refreshed within the stale timeout, whoever owns it", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    plantLock(file, { pid: process.pid, host: `not-${os.hostname()}` }, 60_000);
    await expect(withFileLock(file, () => "mine")).resolves.toBe("mine");
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it("clears what killed writers left beside the lock, keeping a live writer's", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    const dead = deadPid();
    const left = [`run.json.lock.new-${dead}-0123456789abcdef`, `run.json.lock.dead-${dead}-01234567`];
    const live = `run.json.lock.new-${process.pid}-0123456789abcdef`;
    for (const name of [...left, live]) {
      mkdirSync(path.join(dir, name));
      writeFileSync(path.join(dir, name, "owner"), "{}");
    }
    await withFileLock(file, () => undefined);
    expect(readdirSync(dir).sort()).toEqual([live, "run.json"].sort());
  });

  it.each([
    ["holds an empty owner file", { owner: "" }],
    ["holds a garbage owner file", { owner: "\u0000not json{" }],
    ["holds an owner file that is JSON but not an owner", { owner: JSON.stringify({ pid: "1", host: 7 }) }],
    ["holds an owner file larger than any owner", { owner: JSON.stringify({ pid: 1, host: "h", token: "t", pad: "x".repeat(10_000) }) }],
    ["holds unrelated files and no owner file", { "notes.txt": "hello", "sub/deeper.bin": "x" }],
  ])("takes over at once a lock folder that %s, leaving only what is not twinlock's", async (_what, content: Record<string, string>) => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    const lockDir = `${file}.lock`;
    for (const [rel, text] of Object.entries(content)) {
      mkdirSync(path.dirname(path.join(lockDir, rel)), { recursive: true });
      writeFileSync(path.join(lockDir, rel), text);
    }
    await expect(withFileLock(file, () => "mine")).resolves.toBe("mine");
    expectOnlyJunkAside(dir, content);
  });

  it("takes over at once a lock folder whose owner file is a FIFO, without opening it (which would wait for a writer)", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    mkdirSync(`${file}.lock`);
    execFileSync("mkfifo", [path.join(`${file}.lock`, "owner")]);
    await expect(withFileLock(file, () => "mine")).resolves.toBe("mine");
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it("takes over at once an old ownerless lock folder, which proper-lockfile finds stale but cannot rmdir", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    const lockDir = `${file}.lock`;
    mkdirSync(lockDir);
    writeFileSync(path.join(lockDir, "junk"), "x");
    const then = new Date(Date.now() - 60_000);
    utimesSync(lockDir, then, then);
    await expect(withFileLock(file, () => "mine")).resolves.toBe("mine");
    expectOnlyJunkAside(dir, { junk: "x" });
  });

  it("never steals a live lock held by withFileLock in this process, even with junk beside its owner file", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    const lockDir = `${file}.lock`;
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let holderToken = "";
    const log: string[] = [];
    const holder = withFileLock(file, async () => {
      holderToken = JSON.parse(readFileSync(path.join(lockDir, "owner"), "utf8")).token;
      writeFileSync(path.join(lockDir, "junk.txt"), "unrelated");
      log.push("holder in");
      await gate;
      log.push("holder out");
    });
    while (log.length === 0) await sleep(5);
    const waiter = withFileLock(file, () => {
      log.push("waiter in");
    });
    await sleep(300);
    expect(log).toEqual(["holder in"]);
    expect(JSON.parse(readFileSync(path.join(lockDir, "owner"), "utf8")).token).toBe(holderToken);
    release();
    await Promise.all([holder, waiter]);
    expect(log).toEqual(["holder in", "holder out", "waiter in"]);
    expectOnlyJunkAside(dir, { "junk.txt": "unrelated" });
  });

  it("never steals a live lock held by another process: it waits, and enters once that process releases", async () => {
    const dir = makeTempDir();
    const file = runFileIn(dir);
    const lockDir = `${file}.lock`;
    const holder = await holdInChild(file);
    const owner = JSON.parse(readFileSync(path.join(lockDir, "owner"), "utf8"));
    expect(owner.pid).toBe(holder.pid);
    const waiter = startLocked(file);
    await sleep(500);
    expect(waiter.state.entered).toBe(false);
    expect(JSON.parse(readFileSync(path.join(lockDir, "owner"), "utf8")).token).toBe(owner.token);
    const exited = new Promise((r) => holder.once("exit", r));
    holder.stdin?.end();
    await expect(waiter.done).resolves.toBe("done");
    expect(await exited).toBe(0);
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it(`gives up with a ConflictError naming the owner after waiting ${LOCK_WAIT_MS / 1000}s for a live one`, async () => {
    const file = runFileIn(makeTempDir());
    const lockDir = plantLock(file, { pid: process.pid });
    // Keep the planted lock fresh in the future, then let the clock jump past the wait limit.
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(lockDir, future, future);
    const realNow = Date.now.bind(Date);
    let calls = 0;
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + (calls++ > 0 ? LOCK_WAIT_MS + 1_000 : 0));
    const error = await withFileLock(file, () => "never").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).message).toContain(`pid ${process.pid} on ${os.hostname()}`);
    expect((error as Error).message).toContain(`remove ${lockDir}`);
    expect(existsSync(path.join(lockDir, "owner"))).toBe(true);
  });
});

/**
 * After a lock folder that held more than its owner file: the run file, and
 * that folder moved aside whole with its content untouched. twinlock never
 * deletes a tree by path beside a run file (another user may write there and
 * swap a folder for a link mid-delete), so what is not its own stays, aside.
 */
function expectOnlyJunkAside(dir: string, content: Record<string, string>): void {
  const names = readdirSync(dir).sort();
  // A folder with nothing but an (unusable) owner file is twinlock's own shape: it is removed.
  if (Object.keys(content).every((rel) => rel === "owner")) {
    expect(names).toEqual(["run.json"]);
    return;
  }
  expect(names).toHaveLength(2);
  expect(names[0]).toBe("run.json");
  expect(names[1]).toMatch(/^run\.json\.lock\.dead-\d+-[0-9a-f]+(?:-\d+-[0-9a-f]{8})?$/);
  const aside = path.join(dir, names[1] as string);
  for (const [rel, text] of Object.entries(content)) {
    if (rel === "owner") continue;
    expect(readFileSync(path.join(aside, rel), "utf8")).toBe(text);
  }
}
