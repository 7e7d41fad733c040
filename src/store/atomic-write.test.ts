import { spawnSync } from "node:child_process";
import * as realFs from "node:fs";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";

// Spy on fsync without changing what it does: the real calls still happen.
vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>();
  return { ...actual, default: actual, fsyncSync: vi.fn(actual.fsyncSync) };
});

// The test setup may have loaded atomic-write.js with the real fs already: load it afresh, under the mock.
vi.resetModules();
const { atomicWriteFile, fsyncDir, fsyncDirAsync, mkdirDurable, removeDeadTempFiles } = await import("./atomic-write.js");

afterEach(() => vi.mocked(realFs.fsyncSync).mockClear());
afterAll(removeTempDirs);

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync("true");
  if (child.pid === undefined) throw new Error("could not start `true`");
  return child.pid;
}

describe("atomicWriteFile", () => {
  it("creates a file with exactly the given text, leaving no temporary file", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "run.json");
    atomicWriteFile(file, '{"a": "é"}\n');
    expect(readFileSync(file, "utf8")).toBe('{"a": "é"}\n');
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it("replaces an existing file's content whole, including with shorter content", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "run.json");
    writeFileSync(file, "x".repeat(10_000));
    atomicWriteFile(file, "short");
    expect(readFileSync(file, "utf8")).toBe("short");
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it("writes bytes exactly, large buffers included", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "blob.bin");
    const bytes = new Uint8Array(5 * 1024 * 1024).map((_, i) => (i * 7919) & 0xff);
    atomicWriteFile(file, bytes);
    expect(Buffer.compare(readFileSync(file), Buffer.from(bytes))).toBe(0);
    expect(readdirSync(dir)).toEqual(["blob.bin"]);
  });

  it("creates the file with the requested mode", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "secret.json");
    atomicWriteFile(file, "{}", 0o600);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("replaces the file through a rename, so a reader that opened the old file keeps reading the old content", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "run.json");
    writeFileSync(file, "old content");
    const fd = realFs.openSync(file, "r");
    try {
      const inodeBefore = realFs.fstatSync(fd).ino;
      atomicWriteFile(file, "new content");
      expect(statSync(file).ino).not.toBe(inodeBefore);
      const buffer = Buffer.alloc(64);
      const n = realFs.readSync(fd, buffer, 0, 64, 0);
      expect(buffer.subarray(0, n).toString()).toBe("old content");
    } finally {
      realFs.closeSync(fd);
    }
    expect(readFileSync(file, "utf8")).toBe("new content");
  });

  it("fsyncs the new file and then its folder (checked through a spy, besides the real calls)", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "run.json");
    atomicWriteFile(file, "data");
    // One fsync of the temporary file's descriptor, one of the folder's.
    expect(vi.mocked(realFs.fsyncSync)).toHaveBeenCalledTimes(2);
  });

  it("refuses at once to fsync a FIFO or a file put where the folder was, never waiting on it (attack: the run file's folder swapped for a FIFO while the lock is held)", async () => {
    const dir = makeTempDir();
    const fifo = path.join(dir, "folder-was-here");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    // Opening a FIFO for reading without O_NONBLOCK waits for a writer that never comes: the test would time out.
    await expect(fsyncDirAsync(fifo)).rejects.toMatchObject({ code: "ENOTDIR" });
    expect(() => fsyncDir(fifo)).toThrow(expect.objectContaining({ code: "ENOTDIR" }));
    writeFileSync(path.join(dir, "plain"), "x");
    await expect(fsyncDirAsync(path.join(dir, "plain"))).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(fsyncDirAsync(dir)).resolves.toBeUndefined();
  });

  it("leaves the target untouched and removes its temporary file when the rename fails", () => {
    const dir = makeTempDir();
    const target = path.join(dir, "taken");
    mkdirSync(target);
    writeFileSync(path.join(target, "inside"), "keep");
    expect(() => atomicWriteFile(target, "data")).toThrow();
    expect(readdirSync(dir)).toEqual(["taken"]);
    expect(readFileSync(path.join(target, "inside"), "utf8")).toBe("keep");
  });

  it("fails without leaving anything when the folder does not exist", () => {
    const dir = makeTempDir();
    expect(() => atomicWriteFile(path.join(dir, "missing", "run.json"), "data")).toThrow(/ENOENT/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("gives concurrent writers of one file distinct temporary names (the last rename wins whole)", async () => {
    const dir = makeTempDir();
    const file = path.join(dir, "run.json");
    const texts = Array.from({ length: 20 }, (_, i) => `writer ${i} `.repeat(1000));
    await Promise.all(texts.map(async (t) => atomicWriteFile(file, t)));
    expect(texts).toContain(readFileSync(file, "utf8"));
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });
});

describe("mkdirDurable", () => {
  it("makes each missing folder and fsyncs the parent of each one it made, and fsyncs nothing for a folder already there", () => {
    const root = makeTempDir();
    const dir = path.join(root, "a", "b");
    expect(mkdirDurable(dir)).toBe(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    // One fsync per folder made: of root (for a) and of a (for b).
    expect(vi.mocked(realFs.fsyncSync)).toHaveBeenCalledTimes(2);
    vi.mocked(realFs.fsyncSync).mockClear();
    mkdirDurable(dir);
    expect(vi.mocked(realFs.fsyncSync)).not.toHaveBeenCalled();
  });
});

describe("removeDeadTempFiles", () => {
  it("removes the temporary files of writers that no longer exist and keeps everything else", () => {
    const dir = makeTempDir();
    const file = path.join(dir, "run.json");
    const dead = deadPid();
    const names = {
      deadTemp: `.run.json.${dead}.0123456789ab.tmp`,
      liveTemp: `.run.json.${process.pid}.0123456789ab.tmp`,
      otherFileTemp: `.other.json.${dead}.0123456789ab.tmp`,
      notOurNaming: `.run.json.${dead}.tmp`,
      run: "run.json",
    };
    for (const n of Object.values(names)) writeFileSync(path.join(dir, n), "x");
    removeDeadTempFiles(file);
    expect(readdirSync(dir).sort()).toEqual([names.liveTemp, names.notOurNaming, names.otherFileTemp, names.run].sort());
  });

  it("does nothing when the folder is gone", () => {
    const dir = makeTempDir();
    expect(() => removeDeadTempFiles(path.join(dir, "gone", "run.json"))).not.toThrow();
  });
});
