import { readFileSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { checkReadiness } from "../handoff/check-readiness.js";
import { readRun } from "../home/run-ledger.js";
import { BudgetError } from "../input/budgets.js";
import { hashEvent } from "../run/event-chain.js";
import type { RunEvent, RunFile } from "../run/run-schema.js";
import { runWithEmptyEvents, thrown } from "../test-support/run-file-writers.js";
import { driveTo, freeze, makeGateRun, makeRunTempDir, removeGateRuns, review, storeOf } from "../test-support/run-fixture.js";
import { readRunFile, serializeRunFile } from "./run-file.js";

afterAll(removeGateRuns);
afterEach(() => vi.restoreAllMocks());

describe("the run file's budget", () => {
  it("refuses a run file of 3 million empty events (9 MB) before parsing it, naming the 100,000-element limit and what it found", async () => {
    const file = (await runWithEmptyEvents(3_000_000)).runFile;
    const parse = vi.spyOn(JSON, "parse");
    const error = thrown(() => readRunFile(file));
    expect(error).toBeInstanceOf(BudgetError);
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain("more than 100,000 elements");
    expect((error as BudgetError).overrun).toMatchObject({ budget: "run file", limit: "elements", max: 100_000 });
    expect((error as BudgetError).overrun.found).toBeGreaterThan(100_000);
    // Refused from a scan of the bytes: nothing was parsed.
    expect(parse).not.toHaveBeenCalled();
  });

  it("refuses a run file over 16 MiB by its size, before reading it", () => {
    const dir = makeRunTempDir();
    const file = path.join(dir, "run.json");
    writeFileSync(file, "");
    // A sparse file: its size is what the agent says, without the disk it would take.
    truncateSync(file, 17 * 1024 * 1024);
    const error = thrown(() => readRunFile(file));
    expect(error).toBeInstanceOf(BudgetError);
    expect(error.message).toContain("is 17,825,792 bytes, over the 16,777,216-byte limit for a run file");
  });

  it("refuses a run file nested 100 levels deep before parsing it, naming the 64-level limit", async () => {
    const file = (await runWithEmptyEvents(1)).runFile;
    writeFileSync(file, `{"format":"twinlock-run/2","events":${"[".repeat(100)}${"]".repeat(100)}}`);
    const error = thrown(() => readRunFile(file));
    expect(error).toBeInstanceOf(BudgetError);
    expect((error as BudgetError).overrun).toMatchObject({ limit: "depth", max: 64 });
  });
});

describe("a run file whose every element is bad", () => {
  it("refuses 40,000 empty events (120 KB) with the first issue, where zod's merge of every issue overflowed the stack", async () => {
    const file = (await runWithEmptyEvents(40_000)).runFile;
    const error = thrown(() => readRunFile(file));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toMatch(/does not match the run-file schema at events\.0\.seq: /);
  });

  it("refuses a chained event whose data holds 50,000 bad files with the event's first issue, not an internal error", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const run = JSON.parse(readFileSync(g.runFile, "utf8")) as RunFile;
    const last = run.events.at(-1) as RunEvent;
    const event: RunEvent = {
      seq: last.seq + 1,
      at: last.at,
      actor: "planner-agent",
      type: "handoff_frozen",
      data: { files: Array.from({ length: 50_000 }, () => ({})) },
      prev: run.head,
    };
    const forged: RunFile = { ...run, revision: event.seq, head: hashEvent(event), events: [...run.events, event] };
    writeFileSync(g.runFile, serializeRunFile(forged));
    const error = thrown(() => readRunFile(g.runFile));
    expect(error).toBeInstanceOf(IntegrityError);
    expect(error.message).toContain(`event ${event.seq} (handoff_frozen) is invalid: its data does not match the handoff_frozen schema`);
  });
});

describe("a handoff record whose every element is bad", () => {
  it("reports 50,000 empty actions in action_plan.json (200 KB) by their first 20 problems, where zod's merge overflowed the stack", () => {
    const dir = makeRunTempDir("twinlock-budget-");
    writeDemoHandoff(dir, demoHandoffRecords());
    writeFileSync(path.join(dir, "action_plan.json"), `{"actions":[${"{},".repeat(49_999)}{}],"stops":[]}`);
    const report = checkReadiness(dir);
    expect(report.ready).toBe(false);
    const problems = report.problems.filter((p) => p.file === "action_plan.json");
    expect(problems).toHaveLength(20);
    expect(problems[0]?.message).toMatch(/^actions\.0\.id: /);
  });

  it("reports a record file of 200,000 elements as over the 100,000-element limit, without parsing it", () => {
    const dir = makeRunTempDir("twinlock-budget-");
    writeDemoHandoff(dir, demoHandoffRecords());
    writeFileSync(path.join(dir, "evidence_index.json"), `{"evidence":[${"1,".repeat(199_999)}1]}`);
    const problems = checkReadiness(dir).problems.filter((p) => p.file === "evidence_index.json");
    expect(problems.map((p) => p.message)).toEqual([
      expect.stringContaining("holds an array or object of more than 100,000 elements, over the limit for a handoff record"),
    ]);
  });
});

describe("the folder store reads a run once per change", () => {
  it("parses a run file's bytes once however often the store reads them", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const store = storeOf(g);
    const size = statSync(g.runFile).size;
    await store.read(g.runFile);
    const parse = vi.spyOn(JSON, "parse");
    for (let i = 0; i < 5; i++) await store.read(g.runFile);
    await store.readUnverified(g.runFile);
    expect(parse.mock.calls.filter(([text]) => typeof text === "string" && text.length === size)).toHaveLength(0);
  });

  it("verifies again when the agent rewrites the run file keeping its size and modification time", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const store = storeOf(g);
    await store.read(g.runFile);
    const before = statSync(g.runFile);
    const text = readFileSync(g.runFile, "utf8");
    // The same length: one hex digit of the head changed.
    const at = text.indexOf('"head": "sha256:') + 16;
    const tampered = `${text.slice(0, at)}${text[at] === "0" ? "1" : "0"}${text.slice(at + 1)}`;
    writeFileSync(g.runFile, tampered);
    utimesSync(g.runFile, before.atime, before.mtime);
    expect(statSync(g.runFile).size).toBe(before.size);
    await expect(store.read(g.runFile)).rejects.toThrow(/hash chain broken/);
  });

  it("refuses a rolled-back copy behind a checkpoint no writer touched lately at once, without waiting to read it again", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const store = storeOf(g);
    const older = readFileSync(g.runFile);
    // Two writes on: more than the one a crash can leave the file behind by.
    await freeze(g);
    await review(g, "approved");
    writeFileSync(g.runFile, older);
    const checkpoint = path.join(store.home.dir, "runs", `${(await store.readUnverified(g.runFile)).state.run_id}.json`);
    const past = new Date(Date.now() - 60_000);
    utimesSync(checkpoint, past, past);
    const wait = vi.spyOn(Atomics, "wait");
    expect(() => readRun(g.runFile, store.home)).toThrow(/behind its checkpoint/);
    expect(wait).not.toHaveBeenCalled();
    await expect(store.read(g.runFile)).rejects.toThrow(/behind its checkpoint/);
  });
});
