import { execFileSync, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeDemoHandoff } from "../../src/demo/demo-handoff.js";
import { UsageError } from "../../src/errors/errors.js";
import { checkReadiness } from "../../src/handoff/check-readiness.js";
import { hashHandoff } from "../../src/handoff/hash-handoff.js";
import { findSuiteRoot } from "../../src/suite/find-suite-root.js";
import { loadSuite } from "../../src/suite/load-suite.js";
import { copyExampleSuite, makeTempDir, removeTempDirs } from "../../src/test-support/temp-suite.js";
import { keyOption } from "../../src/trust/key-option.js";
import { loadPrivateKey } from "../../src/trust/keys.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

/**
 * A FIFO where a file is read makes a plain open wait for a writer forever
 * (and a process blocked there does not stop on SIGTERM). Every reader of a
 * path refuses a FIFO, socket or device at once, with one line naming it.
 */

/** How long one CLI run may take before it counts as hanging. */
const SPAWN_TIMEOUT_MS = 30_000;
/** A prompt of the example suite, replaced by a special file in the tests. */
const PROMPT = "debugging/md-30-debugging-executor.md";

beforeAll(ensureBuilt, 180_000);
afterAll(removeTempDirs);

/** Replace `file` by a FIFO. */
function makeFifo(file: string): string {
  rmSync(file, { force: true });
  execFileSync("mkfifo", [file]);
  return file;
}

/** Run `fn` with a unix socket listening at `socketPath` (after removing what is there), closed afterwards. */
async function withSocket(socketPath: string, fn: () => unknown | Promise<unknown>): Promise<void> {
  rmSync(socketPath, { force: true });
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, resolve);
  });
  try {
    await fn();
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The UsageError `fn` throws, checked to be one line. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error("expected a UsageError, but the call returned");
}

/** A handoff folder holding the demo records. */
function demoHandoff(): string {
  const dir = path.join(makeTempDir("twinlock-special-"), "handoff");
  writeDemoHandoff(dir);
  return dir;
}

/** Run the built CLI; a run that hangs is killed after SPAWN_TIMEOUT_MS and fails the test instead of stalling it. */
function runBuiltCli(args: string[]) {
  const r = spawnSync(process.execPath, [DIST_BIN, ...args], {
    encoding: "utf8",
    timeout: SPAWN_TIMEOUT_MS,
    killSignal: "SIGKILL",
    env: { ...process.env, NO_COLOR: "1", TWINLOCK_SUITE: "", TWINLOCK_KEY: "" },
  });
  expect(r.signal, `twinlock ${args.join(" ")} was killed (hung?): ${r.stderr}`).toBeNull();
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the suite loader", () => {
  it("refuses a prompt file that is a FIFO, naming it", () => {
    const root = copyExampleSuite();
    const fifo = makeFifo(path.join(root, PROMPT));
    expect(refusal(() => loadSuite(root))).toBe(
      `prompt file ${fifo} is a FIFO (named pipe), not a regular file; replace it with the prompt's Markdown file, or remove it`,
    );
  });

  it("refuses a prompt file that is a unix socket, naming it", async () => {
    const root = copyExampleSuite();
    await withSocket(path.join(root, "debugging", "md-99.md"), () => {
      expect(refusal(() => loadSuite(root))).toMatch(/^prompt file .*md-99\.md is a socket, not a regular file; /);
    });
  });

  it("refuses a twinlock.yaml that is a FIFO, naming it", () => {
    const root = copyExampleSuite();
    const fifo = makeFifo(path.join(root, "twinlock.yaml"));
    expect(refusal(() => loadSuite(root))).toBe(
      `suite config ${fifo} is a FIFO (named pipe), not a regular file; make twinlock.yaml a plain YAML file of at most 1 MiB (move bulky content out of it), or remove it`,
    );
  });

  it("refuses a --suite that is a FIFO, naming it", () => {
    const fifo = makeFifo(path.join(makeTempDir(), "suite"));
    expect(refusal(() => findSuiteRoot({ suite: fifo }))).toBe(
      `--suite ${fifo}: a FIFO (named pipe), not a folder; give the folder that holds the prompt files`,
    );
  });
});

describe("the key loader", () => {
  it("refuses a key file that is a FIFO, naming it", () => {
    const fifo = makeFifo(path.join(makeTempDir(), "alice.key"));
    expect(refusal(() => loadPrivateKey(fifo))).toBe(
      `key file ${fifo} is a FIFO (named pipe), not a regular file; pass --key FILE made by \`twinlock keygen\``,
    );
  });

  it("refuses /dev/null given as --key, as a character device", () => {
    expect(refusal(() => keyOption("/dev/null"))).toBe(
      "key file /dev/null is a character device, not a regular file; pass --key FILE made by `twinlock keygen`",
    );
  });

  it("refuses a FIFO named by TWINLOCK_KEY, saying where the path came from", () => {
    const fifo = makeFifo(path.join(makeTempDir(), "env.key"));
    const saved = process.env.TWINLOCK_KEY;
    process.env.TWINLOCK_KEY = fifo;
    try {
      expect(refusal(() => keyOption(undefined))).toMatch(
        /^key file named by TWINLOCK_KEY .* is a FIFO \(named pipe\), not a regular file; /,
      );
    } finally {
      if (saved === undefined) delete process.env.TWINLOCK_KEY;
      else process.env.TWINLOCK_KEY = saved;
    }
  });
});

describe("the handoff readers", () => {
  it("readiness refuses a record file that is a FIFO, naming it", () => {
    const dir = demoHandoff();
    makeFifo(path.join(dir, "action_plan.json"));
    expect(refusal(() => checkReadiness(dir))).toBe(
      "handoff contains action_plan.json, which is not a regular file but a FIFO (named pipe); remove it",
    );
  });

  it("readiness refuses a record file that is a unix socket, naming it", async () => {
    const dir = demoHandoff();
    await withSocket(path.join(dir, "evidence_index.json"), () => {
      expect(refusal(() => checkReadiness(dir))).toBe(
        "handoff contains evidence_index.json, which is not a regular file but a socket; remove it",
      );
    });
  });

  it("the handoff hash refuses a FIFO in the folder, naming it", async () => {
    const dir = demoHandoff();
    makeFifo(path.join(dir, "report.md"));
    const error = await hashHandoff(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe("handoff contains report.md, which is not a regular file but a FIFO (named pipe); remove it");
  });
});

describe("the built CLI, as a process", () => {
  it("`twinlock validate` exits 2 with one line when a prompt file is a FIFO", () => {
    const root = copyExampleSuite();
    const fifo = makeFifo(path.join(root, PROMPT));
    const r = runBuiltCli(["validate", "--suite", root]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `twinlock: prompt file ${fifo} is a FIFO (named pipe), not a regular file; replace it with the prompt's Markdown file, or remove it\n`,
    );
  });

  it("`twinlock validate` exits 2 with one line when twinlock.yaml is a FIFO", () => {
    const root = copyExampleSuite();
    makeFifo(path.join(root, "twinlock.yaml"));
    const r = runBuiltCli(["validate", "--suite", root]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^twinlock: suite config .*twinlock\.yaml is a FIFO \(named pipe\), not a regular file; [^\n]*\n$/);
  });

  it("`twinlock validate` exits 2 with one line when the committed graph file named by graph_file is a FIFO", () => {
    const root = copyExampleSuite();
    rmSync(path.join(root, "capability-graph.json"));
    const fifo = makeFifo(path.join(root, "capability-graph.json"));
    const r = runBuiltCli(["validate", "--suite", root]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`twinlock: graph file ${fifo} is a FIFO (named pipe), not a regular file; make it the committed graph file\n`);
  });

  it("`twinlock readiness` exits 2 with one line when a record file is a FIFO", () => {
    const dir = demoHandoff();
    makeFifo(path.join(dir, "finding_register.json"));
    const r = runBuiltCli(["readiness", dir]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "twinlock: handoff contains finding_register.json, which is not a regular file but a FIFO (named pipe); remove it\n",
    );
  });

  it("`twinlock hash` exits 2 with one line when a handoff file is a FIFO", () => {
    const dir = demoHandoff();
    makeFifo(path.join(dir, "report.md"));
    const r = runBuiltCli(["hash", dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("twinlock: handoff contains report.md, which is not a regular file but a FIFO (named pipe); remove it\n");
  });
});
