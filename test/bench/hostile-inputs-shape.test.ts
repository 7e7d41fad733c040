import { readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  CHAINED_RUN_BYTES,
  loopbackAddresses,
  signinFlood,
  writeChainedRunFile,
  writeEmptyActionsPlan,
  writeEmptyEventsRunFile,
  writeManySmallFiles,
  writeRandomLinesFile,
} from "../../bench/lib/hostile-inputs.mjs";
import { countInversions } from "../../bench/lib/store-bench.mjs";
import { hashEvent, verifyChain } from "../../src/run/event-chain.js";
import type { RunFile } from "../../src/run/run-schema.js";
import { verifyRunFile } from "../../src/store/run-file.js";
import { makeGateRun, removeGateRuns, startRun } from "../../src/test-support/run-fixture.js";
import { makeTempDir, removeTempDirs } from "../../src/test-support/temp-suite.js";
import { SOAK } from "../support/soak.js";

afterAll(() => {
  removeTempDirs();
  removeGateRuns();
});

/**
 * The hostile-inputs section of `npm run bench` names each attack by its
 * shape ("a validly chained 50 MB run file", "3 million empty events"): these
 * tests hold each generator to the shape it is named by, so a figure in the
 * table is a figure for that attack and not a smaller or broken one.
 */
async function realRunFile(): Promise<string> {
  const g = makeGateRun();
  await startRun(g);
  return g.runFile;
}

const readRun = (file: string) => JSON.parse(readFileSync(file, "utf8")) as RunFile;

describe("the hostile-inputs generators", () => {
  it("writes a 117 KiB file of 7,488 random 16-byte lines, and a second one that shares almost no line with the first", () => {
    const dir = makeTempDir();
    const a = writeRandomLinesFile(path.join(dir, "a.txt"));
    const b = writeRandomLinesFile(path.join(dir, "b.txt"));
    expect(a).toEqual({ bytes: 117 * 1024, lines: 7488 });
    for (const file of ["a.txt", "b.txt"]) {
      const text = readFileSync(path.join(dir, file), "utf8");
      expect(statSync(path.join(dir, file)).size).toBe(117 * 1024);
      expect(text.endsWith("\n")).toBe(true);
      const lines = text.slice(0, -1).split("\n");
      expect(lines).toHaveLength(7488);
      expect(lines.every((l) => /^[0-9a-f]{15}$/.test(l))).toBe(true);
    }
    // Two revisions that differ in (nearly) every line: the diff between them is as long as it can be.
    const first = new Set(readFileSync(path.join(dir, "a.txt"), "utf8").split("\n"));
    const shared = readFileSync(path.join(dir, "b.txt"), "utf8")
      .split("\n")
      .filter((l) => l !== "" && first.has(l));
    expect(shared.length).toBeLessThan(8);
    expect(b.lines).toBe(7488);
  });

  it("names 50 MB as the size of the chained run file the bench grows", () => {
    expect(CHAINED_RUN_BYTES).toBe(50_000_000);
  });

  // The whole 50 MB under TWINLOCK_SOAK=1 (.ci/run); the same generator at 2 MB otherwise, every check the same.
  const chained = SOAK ? CHAINED_RUN_BYTES : 2_000_000;
  it(`grows a real run file to a validly chained one of ${chained / 1e6} MB that verifyChain accepts and whose replay refuses the first added event`, async () => {
    const file = await realRunFile();
    const before = readRun(file);
    const shape = SOAK ? writeChainedRunFile(file, { hashEvent }) : writeChainedRunFile(file, { hashEvent, bytes: chained });
    const after = readRun(file);
    expect(statSync(file).size).toBe(shape.bytes);
    expect(shape.bytes).toBeGreaterThanOrEqual(chained);
    expect(shape.bytes).toBeLessThan(chained + 100_000);
    expect(after.events).toHaveLength(shape.events);
    expect(after.revision).toBe(after.events.length);
    expect(after.events.slice(0, before.events.length)).toEqual(before.events);
    expect(verifyChain(after.events, after.head)).toEqual({ ok: true, head: after.head });
    // Every byte is read, parsed and hashed before anything refuses: replay stops at the first added event.
    expect(verifyRunFile(after)).toMatchObject({ ok: false, check: "replay", seq: before.events.length + 1 });
  }, 180_000);

  // The bench's 3,000,000 under TWINLOCK_SOAK=1 (.ci/run); 300,000 otherwise (3 bytes an event either way).
  const many = SOAK ? ([3_000_000, 9_000_000, 9_010_000] as const) : ([300_000, 900_000, 910_000] as const);
  it(`writes a run file of exactly ${many[0].toLocaleString("en")} empty events (${many[1] / 1e6} MB), and one of 40,000, every other field of the run kept`, async () => {
    for (const [count, low, high] of [many, [40_000, 120_000, 130_000] as const]) {
      const file = await realRunFile();
      const { events: _events, ...before } = readRun(file);
      const shape = writeEmptyEventsRunFile(file, count);
      expect(statSync(file).size).toBe(shape.bytes);
      expect(shape.bytes).toBeGreaterThanOrEqual(low);
      expect(shape.bytes).toBeLessThan(high);
      const { events, ...rest } = readRun(file);
      expect(events).toHaveLength(count);
      expect(events.every((e) => Object.keys(e).length === 0)).toBe(true);
      expect(rest).toEqual(before);
    }
  }, 180_000);

  it("writes an action_plan.json of exactly 50,000 empty actions (200 KB) and no stops", () => {
    const dir = makeTempDir();
    const shape = writeEmptyActionsPlan(dir, 50_000);
    const plan = JSON.parse(readFileSync(path.join(dir, "action_plan.json"), "utf8")) as { actions: object[]; stops: unknown[] };
    expect(plan.actions).toHaveLength(50_000);
    expect(plan.actions.every((a) => Object.keys(a).length === 0)).toBe(true);
    expect(plan.stops).toEqual([]);
    expect(shape.bytes).toBeGreaterThanOrEqual(200_000);
    expect(shape.bytes).toBeLessThan(201_000);
  });

  // The bench's 20,000 under TWINLOCK_SOAK=1 (.ci/run); 2,000 otherwise (still two folders of 1,000).
  const smallFiles = SOAK ? 20_000 : 2_000;
  it(`adds exactly ${smallFiles.toLocaleString("en")} small files of 16 bytes to a handoff`, () => {
    const dir = makeTempDir();
    const shape = writeManySmallFiles(dir, smallFiles);
    const files = readdirSync(shape.dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
    expect(files).toHaveLength(smallFiles);
    expect(files.every((f) => statSync(path.join(f.parentPath, f.name)).size === 16)).toBe(true);
  });

  // The bench's 1,200 under TWINLOCK_SOAK=1 (.ci/run); 200 otherwise, from the same 40 addresses.
  const flood = SOAK ? 1200 : 200;
  it(`floods ${flood.toLocaleString("en")} anonymous sign-in starts from 40 loopback addresses, ${flood / 40} from each, every one answered before it returns`, async () => {
    const seen = new Map<string, number>();
    const paths = new Set<string>();
    const server = http.createServer((req, res) => {
      const from = req.socket.remoteAddress ?? "?";
      seen.set(from, (seen.get(from) ?? 0) + 1);
      paths.add(`${req.method} ${req.url}`);
      req.resume();
      req.on("end", () => res.end("{}"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const r = await signinFlood({ url: `http://127.0.0.1:${port}`, requests: flood, addresses: loopbackAddresses(40) });
      expect(r).toMatchObject({ sent: flood, statuses: { "200": flood } });
      expect([...seen.keys()].sort()).toEqual(loopbackAddresses(40).sort());
      expect([...seen.values()].every((n) => n === flood / 40)).toBe(true);
      expect([...paths]).toEqual(["POST /signin/options"]);
      expect(seen.has("127.0.0.1")).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("sends the flood nowhere but 127.0.0.1", async () => {
    await expect(signinFlood({ url: "http://localhost:1", requests: 1 })).rejects.toThrow(/only targets http:\/\/127\.0\.0\.1/);
    await expect(signinFlood({ url: "http://10.0.0.1:80", requests: 1 })).rejects.toThrow(/only targets/);
  });
});

describe("the fair-lock measure's count of arrival-order inversions", () => {
  const brute = (order: number[]) => {
    let n = 0;
    for (let i = 0; i < order.length; i++) for (let j = i + 1; j < order.length; j++) if ((order[i] as number) > (order[j] as number)) n++;
    return n;
  };

  it("counts every pair where a decision asked later got the earlier place in the chain, as a pairwise count does", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 10_000 }), { maxLength: 60 }), (revisions) => {
        // Decision i asked at i ms; its event got revisions[i].
        const decisions = revisions.map((revision, i) => ({ asked: i * 10, revision, run: 0 }));
        expect(countInversions(decisions).inversions).toBe(brute(revisions));
      }),
    );
  });

  it("counts none for decisions served in the order they asked, and every pair for the reverse order", () => {
    const n = 50;
    const inOrder = Array.from({ length: n }, (_, i) => ({ asked: i, revision: i + 1, run: 0 }));
    expect(countInversions(inOrder)).toMatchObject({ inversions: 0, overtaken: 0 });
    const reversed = Array.from({ length: n }, (_, i) => ({ asked: i, revision: n - i, run: 0 }));
    expect(countInversions(reversed)).toMatchObject({ inversions: (n * (n - 1)) / 2, overtaken: n - 1 });
  });

  it("does not count asks closer than the margin, nor pairs on different runs", () => {
    const close = [
      { asked: 0, revision: 2, run: 0 },
      { asked: 0.5, revision: 1, run: 0 },
    ];
    expect(countInversions(close, 1).inversions).toBe(0);
    expect(countInversions(close, 0).inversions).toBe(1);
    const twoRuns = [
      { asked: 0, revision: 2, run: 0 },
      { asked: 5, revision: 1, run: 1 },
    ];
    expect(countInversions(twoRuns, 1).inversions).toBe(0);
  });
});
