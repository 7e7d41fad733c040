import { closeSync, ftruncateSync, linkSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RefusalError, UsageError } from "../errors/errors.js";
import { inOffloadLane, runOffThread, stopOffThreadWorkers } from "./run-off-thread.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-offload-"));
afterAll(async () => {
  await stopOffThreadWorkers();
  rmSync(dir, { recursive: true, force: true });
});

/** Room for anything: the quota is not what these tests are about. */
const standing = {
  quota: { perRun: 2 ** 40, perHome: 2 ** 40, source: "the default" },
  homeUsed: 0,
  runUsed: 0,
  runRefs: [],
  reservedHome: 0,
  reservedRun: 0,
  storing: [],
};

describe("work run on a worker thread", () => {
  it("answers as the task would on the calling thread", async () => {
    const root = path.join(dir, "listed");
    mkdirSync(path.join(root, "sub"), { recursive: true });
    writeFileSync(path.join(root, "b.txt"), "b");
    writeFileSync(path.join(root, "sub", "a.txt"), "a");
    expect((await runOffThread("listHandoffForFreeze", { root })).rel).toEqual(["b.txt", "sub/a.txt"]);
  });

  it("throws a refusal or usage error from the worker as the same class, with its message", async () => {
    const root = path.join(dir, "linked");
    mkdirSync(root);
    symlinkSync("/etc/passwd", path.join(root, "key"));
    const error = await runOffThread("listHandoffForFreeze", { root }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/handoff contains a symbolic link \(key\)/);
    // A refusal keeps its data: the copy of a file with a second hard link is refused as that attack.
    const home = path.join(dir, "home");
    mkdirSync(home);
    writeFileSync(path.join(dir, "outside"), "a key");
    const linked = path.join(dir, "hard");
    mkdirSync(linked);
    linkSync(path.join(dir, "outside"), path.join(linked, "a.txt"));
    const refusal = await runOffThread("copyHandoff", {
      home: { dir: home, id: "home_0000000000000000" },
      root: linked,
      rel: ["a.txt"],
      standing,
    }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(RefusalError);
    expect((refusal as RefusalError).details).toMatchObject({ attack: "hard-link" });
  });

  it("fails the task of a worker that stops, and serves the next task on a new one", async () => {
    // A copy that takes seconds (hashing 4 GiB of a sparse file's zeros), stopped as it starts.
    const root = path.join(dir, "listed");
    const sparse = path.join(dir, "sparse");
    mkdirSync(sparse);
    const fd = openSync(path.join(sparse, "big.bin"), "w");
    ftruncateSync(fd, 4 * 1024 ** 3);
    closeSync(fd);
    const home = path.join(dir, "home-stopped");
    mkdirSync(home);
    const pending = runOffThread("copyHandoff", {
      home: { dir: home, id: "home_0000000000000000" },
      root: sparse,
      rel: ["big.bin"],
      standing,
    });
    await stopOffThreadWorkers();
    await expect(pending).rejects.toThrow(/worker thread running copyHandoff stopped/);
    expect((await runOffThread("listHandoffForFreeze", { root })).rel).toEqual(["b.txt", "sub/a.txt"]);
  });

  it("gives each caller's lane one worker at most: a reviewer's task runs beside an agent's queue of long copies, not after it", async () => {
    const sparse = path.join(dir, "lane-sparse");
    mkdirSync(sparse);
    const fd = openSync(path.join(sparse, "big.bin"), "w");
    // Each copy hashes and stores 128 MiB: a hundred times the page's listing of two files, so the order says which
    // worker each task waited for, not how fast the machine is.
    ftruncateSync(fd, 128 * 1024 ** 2);
    closeSync(fd);
    // Both workers started first (a worker's start takes longer than a copy on a loaded machine), in lanes of their own.
    const listed = path.join(dir, "listed");
    await Promise.all(
      ["warm:a", "warm:b"].map((lane) => inOffloadLane(lane, () => runOffThread("listHandoffForFreeze", { root: listed }))),
    );
    const finished: string[] = [];
    const copies = [1, 2, 3, 4].map((i) => {
      const home = path.join(dir, `lane-home-${i}`);
      mkdirSync(home);
      return inOffloadLane("agent:tl_0123456789abcdef", () =>
        runOffThread("copyHandoff", { home: { dir: home, id: "home_0000000000000000" }, root: sparse, rel: ["big.bin"], standing }),
      ).then(() => finished.push(`copy ${i}`));
    });
    const page = inOffloadLane("session:alice", () => runOffThread("listHandoffForFreeze", { root: path.join(dir, "listed") })).then(() =>
      finished.push("page"),
    );
    await Promise.all([...copies, page]);
    // Without lanes both workers took the agent's first two copies and the page waited for one of them.
    expect(finished[0]).toBe("page");
    expect(finished.slice(1)).toEqual(["copy 1", "copy 2", "copy 3", "copy 4"]);
  });
});
