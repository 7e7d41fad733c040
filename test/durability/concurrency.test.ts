import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { initRun } from "../../src/gate/init-run.js";
import { folderRunStore } from "../../src/home/folder-run-store.js";
import { readRun } from "../../src/home/run-ledger.js";
import type { RunFile } from "../../src/run/run-schema.js";
import { readRunFile } from "../../src/store/run-file.js";
import { RUN_EXAMPLE_SUITE, testHome } from "../../src/test-support/run-fixture.js";
import { makeTempDir, removeTempDirs } from "../../src/test-support/temp-suite.js";
import { forkWriter, killLiveWriters } from "../support/child-writer.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";
import { soakCount } from "../support/soak.js";

const WRITER = fileURLToPath(new URL("../support/stop-writer.mjs", import.meta.url));
/** Writer processes: 4 by default (each a Node process loading the library), 8 under TWINLOCK_SOAK=1 (.ci/run). */
const PROCESSES = soakCount("CONCURRENCY_PROCESSES", 4, 8);
/** Each process raises and resolves this many stops, two events each: 3 by default, CONCURRENCY_PAIRS (25 in .ci/run) else. */
const PAIRS_PER_PROCESS = Number(process.env.CONCURRENCY_PAIRS ?? 3);

beforeAll(ensureBuilt, 180_000);
afterEach(killLiveWriters);
afterAll(removeTempDirs);

describe("concurrent writers on one run file (SPEC §7)", () => {
  it(
    `serialises ${PROCESSES} processes × ${PAIRS_PER_PROCESS * 2} appends: every event once, seq 1..N, chain verifies, nothing left behind`,
    async () => {
      const dir = makeTempDir("twinlock-concurrency-");
      const runFile = path.join(dir, "run.json");
      await initRun({ run: runFile, store: folderRunStore(testHome()), suiteRoot: RUN_EXAMPLE_SUITE, planners: ["MD-29"], actor: "test" });

      const writers = Array.from({ length: PROCESSES }, (_, p) => forkWriter(WRITER, [runFile, String(p), String(PAIRS_PER_PROCESS)]));
      await Promise.all(writers.map((w) => w.ready));
      const started = Date.now();
      for (const w of writers) w.go();
      const exits = await Promise.all(writers.map((w) => w.exited));
      const elapsed = Date.now() - started;
      console.info(`concurrency: ${PROCESSES} processes × ${PAIRS_PER_PROCESS * 2} writes in ${elapsed} ms`);
      for (const [p, e] of exits.entries()) {
        expect({ writer: p, ...e, stderr: writers[p]?.stderr() }).toEqual({ writer: p, code: 0, signal: null, stderr: "" });
      }

      // The file parses and passes the store's own verification (schema, chain, replay).
      const file = JSON.parse(readFileSync(runFile, "utf8")) as RunFile;
      const loaded = readRunFile(runFile);
      // The gate home recorded exactly this head: nothing was written around it.
      expect(readRun(runFile, testHome()).file.head).toBe(file.head);
      const total = 1 + PROCESSES * PAIRS_PER_PROCESS * 2;
      expect(file.events).toHaveLength(total);
      expect(file.revision).toBe(total);
      expect(file.events.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));

      // Every event is there exactly once, and each writer's own order is kept.
      const stopEvents = file.events.filter((e) => e.type === "stop_raised" || e.type === "stop_resolved");
      expect(stopEvents).toHaveLength(total - 1);
      const byReason = new Map<string, { raised: number[]; resolved: number[] }>();
      for (const e of stopEvents) {
        const reason = (e.type === "stop_resolved" ? (e.data.receipt as { reason: string }).reason : e.data.reason) as string;
        const entry = byReason.get(reason) ?? { raised: [], resolved: [] };
        (e.type === "stop_raised" ? entry.raised : entry.resolved).push(e.seq);
        byReason.set(reason, entry);
      }
      for (let p = 0; p < PROCESSES; p++) {
        let last = 0;
        for (let k = 0; k < PAIRS_PER_PROCESS; k++) {
          const entry = byReason.get(`p${p}-i${k}`);
          expect(entry, `p${p}-i${k}`).toBeDefined();
          expect(entry?.raised, `raises of p${p}-i${k}`).toHaveLength(1);
          expect(entry?.resolved, `resolutions of p${p}-i${k}`).toHaveLength(1);
          const [raised, resolved] = [entry?.raised[0] as number, entry?.resolved[0] as number];
          expect(raised).toBeGreaterThan(last);
          expect(resolved).toBeGreaterThan(raised);
          last = resolved;
        }
      }
      expect(byReason.size).toBe(PROCESSES * PAIRS_PER_PROCESS);
      expect(loaded.state.stops).toHaveLength(PROCESSES * PAIRS_PER_PROCESS);
      expect(loaded.state.stops.every((s) => s.resolved_at !== null)).toBe(true);

      // The writers really overlapped: some writer's events begin before another's end, so the
      // lock, not luck of timing, kept them apart.
      const spans = Array.from({ length: PROCESSES }, (_, p) => {
        const seqs = stopEvents.filter((e) => e.actor === `writer-${p}`).map((e) => e.seq);
        return { first: Math.min(...seqs), last: Math.max(...seqs) };
      });
      const overlapping = spans.filter((a, i) => spans.some((b, j) => i !== j && a.first < b.last && b.first < a.last)).length;
      const switches = stopEvents.filter((e, i) => i > 0 && e.actor !== stopEvents[i - 1]?.actor).length;
      console.info(
        `concurrency: ${overlapping} of ${PROCESSES} writers overlapped another; the writer changed ${switches} times in the log`,
      );
      expect(overlapping).toBeGreaterThan(1);

      // The shipped CLI agrees: the chain verifies and the state equals the replay.
      const verify = spawnSync(process.execPath, [DIST_BIN, "verify-log", runFile, "--json"], { encoding: "utf8" });
      expect(verify.status, verify.stdout + verify.stderr).toBe(0);
      expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, events: total });

      // No temporary file, lock folder or moved-aside lock is left behind.
      expect(readdirSync(dir)).toEqual(["run.json"]);
      // CI's soak (CONCURRENCY_PAIRS=25: 400 appends, each handed to another process in arrival order) shares the machine
      // with the real agent CLIs: a minute per 100 appends is room enough, not a measure.
    },
    Math.max(60_000, PROCESSES * PAIRS_PER_PROCESS * 2 * 600),
  );
});
