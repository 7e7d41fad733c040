import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { createAgentToken } from "../server/agent-tokens.js";
import { countTurns } from "../test-support/count-turns.js";
import { call, PLANNER, removeServerWorlds, type ServerWorld, serverWorld } from "../test-support/gate-server-fixture.js";

afterEach(() => removeServerWorlds());

/**
 * Heavy sizes (the attacks as measured) with TWINLOCK_SOAK=1; light ones by default, which still let through thousands
 * of turns off the thread (6,500 for 128 MiB, 8,000 for 1,000 files, measured on a machine loaded eight times over).
 */
const SOAK = process.env.TWINLOCK_SOAK === "1";
const SMALL_FILES = SOAK ? 20_000 : 300;
const SPARSE_BYTES = SOAK ? 7 * 1024 ** 3 : 128 * 1024 ** 2;

/**
 * Turns of the event loop, and /healthz answers one after another, while `work` runs: work held on the thread
 * lets through a handful of either; work on a worker thread lets both go on all along.
 */
async function measured(w: ServerWorld, work: () => Promise<unknown>) {
  const counts = { turns: 0, answers: 0 };
  const stopCounting = countTurns();
  let done = false;
  let answers = 0;
  const health = (async () => {
    while (!done) {
      const r = await call(w, "/healthz");
      if (r.status === 200 && !done) answers++;
      // The app answers in promises alone: without a turn between asks this loop would starve everything else.
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  try {
    const result = await work();
    counts.turns = stopCounting();
    counts.answers = answers;
    return { ...counts, result };
  } finally {
    done = true;
    stopCounting();
    await health;
  }
}

const freeze = (w: ServerWorld) =>
  freezePairHandoff({ store: w.store, run: w.runFile, planner: PLANNER, handoffDir: w.handoff, key: w.plannerKey });

/*
 * The bar is 100 loop turns: work held on the thread lets through none (0 measured, old code), work off it lets
 * thousands through on an idle machine and hundreds on a machine loaded four times over; the count says where the
 * work ran, not how fast the machine is.
 */
describe("the server's event loop while agent-sized work runs", () => {
  it(`keeps turning and answering /healthz while a handoff of ${SMALL_FILES.toLocaleString("en-US")} small files is frozen, and freezes every file`, async () => {
    const w = await serverWorld();
    const bulk = path.join(w.handoff, "bulk");
    mkdirSync(bulk);
    for (let i = 0; i < SMALL_FILES; i++) writeFileSync(path.join(bulk, `f${String(i).padStart(5, "0")}.bin`), `file ${i}\n`);
    const { turns, answers, result } = await measured(w, () => freeze(w));
    // Copied on the thread, the loop never turned (0 turns, 0 answers, measured); off it, it turns all along (over 20,000).
    expect(turns).toBeGreaterThan(100);
    expect(answers).toBeGreaterThan(100);
    const frozen = (result as Awaited<ReturnType<typeof freeze>>).workflow.handoff?.files ?? [];
    expect(frozen.filter((f) => f.path.startsWith("bulk/"))).toHaveLength(SMALL_FILES);
  }, 180_000);

  it(`keeps turning and answering /healthz while a ${SPARSE_BYTES / 1024 ** 2} MiB sparse file is frozen, hashing every byte`, async () => {
    const w = await serverWorld();
    const fd = openSync(path.join(w.handoff, "big.bin"), "w");
    ftruncateSync(fd, SPARSE_BYTES);
    closeSync(fd);
    const { turns, answers, result } = await measured(w, () => freeze(w));
    // Hashed on the thread: 0 turns, 0 answers (measured); off it, over 10,000.
    expect(turns).toBeGreaterThan(100);
    expect(answers).toBeGreaterThan(100);
    const big = (result as Awaited<ReturnType<typeof freeze>>).workflow.handoff?.files.find((f) => f.path === "big.bin");
    expect(big?.size).toBe(SPARSE_BYTES);
  }, 300_000);

  it("keeps turning and answering /healthz while MCP readiness parses and judges two records of 12 MiB", async () => {
    const w = await serverWorld();
    // Records within the 16 MiB budget, with many entries: reading them is quick, parsing and judging them is not.
    for (const [file, kind] of [
      ["evidence_index.json", "evidence"],
      ["acceptance_criteria.json", "criteria"],
    ] as const) {
      const doc = JSON.parse(readFileSync(path.join(w.handoff, file), "utf8"));
      const pad = "x".repeat(780);
      for (let i = 0; i < 15_000; i++)
        doc[kind].push(
          kind === "evidence"
            ? { id: `EB${i}`, source: `bulk ${i}`, observed: pad, collected_at: "2026-11-28T09:12:00Z" }
            : { id: `VB${i}`, criterion: pad, method: `check ${i}` },
        );
      writeFileSync(path.join(w.handoff, file), JSON.stringify(doc));
    }
    const { token } = await createAgentToken(w.home, { agent: "claude", runId: w.runId, scopes: ["status"] });
    const { turns, answers, result } = await measured(w, async () => {
      const r = await call(w, "/mcp", {
        token,
        headers: { accept: "application/json, text/event-stream" },
        json: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "twinlock_readiness", arguments: { planner: PLANNER, handoff_dir: w.handoff } },
        },
      });
      return (await r.json()) as { result: { structuredContent: { ready: boolean; problems: unknown[] } } };
    });
    // Judged on the thread, the loop turned only while the records were read (about 250 turns, measured); off it, over 15,000.
    expect(turns).toBeGreaterThan(100);
    expect(answers).toBeGreaterThan(100);
    expect((result as { result: { structuredContent: { ready: boolean } } }).result.structuredContent).toMatchObject({ ready: true });
  }, 120_000);
});
