import { execFileSync } from "node:child_process";
import fs, { closeSync, existsSync, fstatSync, lstatSync, mkdirSync, type Stats, symlinkSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import { makeTempDir, removeTempDirs, runningAsRoot } from "../test-support/temp-suite.js";
import { describeFileKind, openRegularFile, readFailureCode, readRegularFile } from "./read-regular-file.js";

const realStat = { lstatSync: fs.lstatSync, statSync: fs.statSync };
/** The `fs` object, whose functions a test may replace (the typings mark them read-only). */
const patchable = fs as { lstatSync: unknown; statSync: unknown };

/**
 * Make the next look at a path (`lstatSync` and `statSync`) report `stats`,
 * as if the file had been swapped after it was looked at. Patched on the
 * `fs` object and synced into the named exports the module imports.
 */
function nextLookReports(stats: Stats): void {
  const once = () => {
    restoreLooks();
    return stats;
  };
  patchable.lstatSync = once;
  patchable.statSync = once;
  syncBuiltinESMExports();
}

function restoreLooks(): void {
  patchable.lstatSync = realStat.lstatSync;
  patchable.statSync = realStat.statSync;
  syncBuiltinESMExports();
}

afterEach(restoreLooks);
afterAll(removeTempDirs);

/** The UsageError `fn` throws; fails the test when it returns instead. */
function refusal(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).not.toContain("\n");
    return error as UsageError;
  }
  throw new Error("expected a UsageError, but the call returned");
}

function fifoIn(dir: string, name = "run.json"): string {
  const file = path.join(dir, name);
  execFileSync("mkfifo", [file]);
  return file;
}

/** Run `fn` with a unix socket listening at a path in `dir`, closed afterwards. */
async function withSocket(dir: string, fn: (socketPath: string) => void): Promise<void> {
  const socketPath = path.join(dir, "gate.sock");
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, resolve);
  });
  try {
    fn(socketPath);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("readRegularFile", () => {
  it("returns the whole content of a regular file", () => {
    const file = path.join(makeTempDir(), "run.json");
    const content = Buffer.from(`{"a":"é"}\n${"x".repeat(100_000)}`);
    writeFileSync(file, content);
    expect(readRegularFile(file, "run file").equals(content)).toBe(true);
  });

  it("returns an empty buffer for an empty file", () => {
    const file = path.join(makeTempDir(), "empty.md");
    writeFileSync(file, "");
    expect(readRegularFile(file, "prompt file")).toHaveLength(0);
  });

  it("reads to the end a file whose reported size is 0, as /proc files are", (ctx) => {
    ctx.skip(!existsSync("/proc/self/status"), "no /proc on this system");
    expect(readRegularFile("/proc/self/status", "status file").toString("utf8")).toMatch(/^Name:/);
  });

  it("refuses a FIFO at once, naming the kind on one line", () => {
    const fifo = fifoIn(makeTempDir());
    expect(refusal(() => readRegularFile(fifo, "run file")).message).toBe(
      `run file ${fifo} is a FIFO (named pipe), not a regular file; give a regular file`,
    );
  });

  it("refuses a unix socket, naming the kind", async () => {
    await withSocket(makeTempDir(), (socketPath) => {
      expect(refusal(() => readRegularFile(socketPath, "key file")).message).toBe(
        `key file ${socketPath} is a socket, not a regular file; give a regular file`,
      );
    });
  });

  it("refuses /dev/null as a character device", () => {
    expect(refusal(() => readRegularFile("/dev/null", "key file")).message).toBe(
      "key file /dev/null is a character device, not a regular file; give a regular file",
    );
  });

  it("refuses a folder", () => {
    const dir = makeTempDir();
    expect(refusal(() => readRegularFile(dir, "run file")).message).toBe(
      `run file ${dir} is a folder, not a regular file; give a regular file`,
    );
  });

  it("follows a symbolic link by default, and refuses the FIFO one points to", () => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, "real.json"), "{}");
    symlinkSync("real.json", path.join(dir, "link.json"));
    symlinkSync(fifoIn(dir, "pipe"), path.join(dir, "pipe-link"));
    expect(readRegularFile(path.join(dir, "link.json"), "run file").toString()).toBe("{}");
    expect(refusal(() => readRegularFile(path.join(dir, "pipe-link"), "run file")).message).toContain("is a FIFO (named pipe)");
  });

  it("still refuses a FIFO or a symbolic link found in place of a file the caller saw as regular (seenRegular)", () => {
    const dir = makeTempDir();
    expect(refusal(() => readRegularFile(fifoIn(dir), "prompt file", { seenRegular: true, noFollow: true })).message).toContain(
      "is a FIFO (named pipe)",
    );
    writeFileSync(path.join(dir, "real.md"), "x");
    symlinkSync("real.md", path.join(dir, "link.md"));
    expect(
      readFailureCode(refusal(() => readRegularFile(path.join(dir, "link.md"), "prompt file", { seenRegular: true, noFollow: true }))),
    ).toBe("ELOOP");
    expect(readRegularFile(path.join(dir, "real.md"), "prompt file", { seenRegular: true, noFollow: true }).toString()).toBe("x");
  });

  it("refuses a symbolic link with noFollow, naming it", () => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, "real.json"), "{}");
    const link = path.join(dir, "link.json");
    symlinkSync("real.json", link);
    expect(refusal(() => readRegularFile(link, "handoff record", { noFollow: true })).message).toBe(
      `handoff record ${link} is a symbolic link, not a regular file; give a regular file`,
    );
  });

  it("ends every refusal with the caller's fix when one is given", () => {
    const fifo = fifoIn(makeTempDir());
    const fix = "pass --key FILE made by `twinlock keygen`";
    expect(refusal(() => readRegularFile(fifo, "key file", { fix })).message).toBe(
      `key file ${fifo} is a FIFO (named pipe), not a regular file; ${fix}`,
    );
    expect(refusal(() => readRegularFile(`${fifo}.missing`, "key file", { fix })).message).toBe(
      `key file ${fifo}.missing does not exist (ENOENT); ${fix}`,
    );
  });

  it("refuses a missing file with its code and what to do, keeping Node's error as the cause", () => {
    const missing = path.join(makeTempDir(), "nope.json");
    const error = refusal(() => readRegularFile(missing, "run file"));
    expect(error.message).toBe(`run file ${missing} does not exist (ENOENT); check the path`);
    expect(readFailureCode(error)).toBe("ENOENT");
  });

  it("refuses a path through a file as if it were a folder (ENOTDIR)", () => {
    const file = path.join(makeTempDir(), "plain");
    writeFileSync(file, "x");
    expect(refusal(() => readRegularFile(path.join(file, "child"), "run file")).message).toMatch(
      /^cannot read run file .*\/plain\/child \(ENOTDIR\); a part of the path is not a folder; check the path$/,
    );
  });

  it("refuses a file it may not read (EACCES), saying to fix its permissions", (ctx) => {
    ctx.skip(runningAsRoot(), "running as root: chmod 000 does not stop root from reading");
    const file = path.join(makeTempDir(), "secret.key");
    writeFileSync(file, "x", { mode: 0o000 });
    expect(refusal(() => readRegularFile(file, "key file")).message).toBe(`cannot read key file ${file} (EACCES); fix its permissions`);
  });

  it("refuses a file over maxBytes, naming its size and the limit", () => {
    const file = path.join(makeTempDir(), "big.json");
    writeFileSync(file, "x".repeat(11));
    expect(readRegularFile(file, "run file", { maxBytes: 11 }).toString()).toBe("x".repeat(11));
    const error = refusal(() => readRegularFile(file, "run file", { maxBytes: 10 }));
    expect(error.message).toBe(`run file ${file} is 11 bytes, over the 10-byte limit; check that it is the right file`);
    expect(readFailureCode(error)).toBeUndefined();
  });

  it("refuses a path holding a NUL byte before any file call sees it", () => {
    expect(refusal(() => readRegularFile("/tmp/a\u0000b", "key file")).message).toContain("contains a NUL byte");
  });
});

describe("openRegularFile", () => {
  it("returns the descriptor of a regular file, which the caller closes", () => {
    const file = path.join(makeTempDir(), "run.json");
    writeFileSync(file, "{}");
    const fd = openRegularFile(file, "run file");
    try {
      expect(fstatSync(fd).isFile()).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it("refuses a FIFO, a socket and a character device, each on one line naming its kind", async () => {
    const dir = makeTempDir();
    expect(refusal(() => openRegularFile(fifoIn(dir), "run file")).message).toContain("is a FIFO (named pipe), not a regular file");
    expect(refusal(() => openRegularFile("/dev/null", "run file")).message).toContain("is a character device, not a regular file");
    await withSocket(dir, (socketPath) => {
      expect(refusal(() => openRegularFile(socketPath, "run file")).message).toContain("is a socket, not a regular file");
    });
  });

  it("refuses, without blocking on its open, a FIFO swapped in after the path was looked at", () => {
    const dir = makeTempDir();
    const regular = path.join(dir, "regular.json");
    writeFileSync(regular, "{}");
    const fifo = fifoIn(dir);
    // The first look sees a regular file; the FIFO is what gets opened. A blocking open would hang here.
    nextLookReports(lstatSync(regular));
    expect(refusal(() => openRegularFile(fifo, "run file")).message).toBe(
      `run file ${fifo} is a FIFO (named pipe), not a regular file; give a regular file`,
    );
    nextLookReports(lstatSync(regular));
    const error = refusal(() => openRegularFile(fifo, "run file", { noFollow: true }));
    expect(error.message).toContain("is a FIFO (named pipe)");
    // Refused by fstat on the opened descriptor: a refusal by kind, with no failed call behind it.
    expect(readFailureCode(error)).toBeUndefined();
  });

  it("refuses a symbolic link swapped in after the look, with noFollow (ELOOP)", () => {
    const dir = makeTempDir();
    const regular = path.join(dir, "regular.json");
    writeFileSync(regular, "{}");
    const link = path.join(dir, "link.json");
    symlinkSync("regular.json", link);
    nextLookReports(lstatSync(regular));
    const error = refusal(() => openRegularFile(link, "handoff record", { noFollow: true }));
    expect(readFailureCode(error)).toBe("ELOOP");
  });
});

describe("describeFileKind", () => {
  it("names each kind of file in words", () => {
    const dir = makeTempDir();
    mkdirSync(path.join(dir, "sub"));
    writeFileSync(path.join(dir, "f"), "");
    symlinkSync("f", path.join(dir, "l"));
    const kind = (p: string) => describeFileKind(lstatSync(p));
    expect(kind(path.join(dir, "f"))).toBe("a regular file");
    expect(kind(path.join(dir, "sub"))).toBe("a folder");
    expect(kind(path.join(dir, "l"))).toBe("a symbolic link");
    expect(kind(fifoIn(dir))).toBe("a FIFO (named pipe)");
    expect(kind("/dev/null")).toBe("a character device");
  });
});
