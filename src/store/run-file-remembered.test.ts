import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { BudgetError } from "../input/budgets.js";
import { replayEvents } from "../run/apply-event.js";
import type { RunFile } from "../run/run-schema.js";
import { runWithEmptyEvents, thrown } from "../test-support/run-file-writers.js";
import { driveTo, freeze, makeGateRun, removeGateRuns, storeOf } from "../test-support/run-fixture.js";
import {
  MAX_READS_IN_FLIGHT,
  readRunFile,
  readRunFileAsync,
  runFileChunks,
  runFileIdentityReuses,
  runFileReadsInFlight,
  serializeRunFile,
  type VerifiedRun,
  verifyRunFile,
} from "./run-file.js";

afterAll(removeGateRuns);
afterEach(() => vi.restoreAllMocks());

/** One modification (and access) time for every version of a file: a whole second, which utimes keeps exactly. */
const PINNED_SECONDS = 1_700_000_000;

/** Give `file` the pinned time. */
function pinTime(file: string): void {
  utimesSync(file, PINNED_SECONDS, PINNED_SECONDS);
}

/** Replace `file`'s bytes with `text`, keeping the pinned time it had. */
function rewriteKeepingTime(file: string, text: string | Buffer): void {
  expect(statSync(file).mtimeMs).toBe(PINNED_SECONDS * 1000);
  writeFileSync(file, text);
  pinTime(file);
  expect(statSync(file).mtimeMs).toBe(PINNED_SECONDS * 1000);
}

/** `text` with one hex digit of its chain head changed: the same length, a broken chain. */
function withOtherHead(text: string, digit: "0" | "1" | "2"): string {
  const at = text.indexOf('"head": "sha256:') + 16;
  return `${text.slice(0, at)}${text[at] === digit ? "3" : digit}${text.slice(at + 1)}`;
}

/** JSON text of exactly `bytes` bytes nested 100 levels deep: over the run file's 64-level budget. */
function tooDeep(bytes: number): string {
  const core = `${"[".repeat(100)}${"]".repeat(100)}`;
  return `${core}${" ".repeat(bytes - core.length)}`;
}

describe("a run file's refusal is remembered by its bytes, never by its size or time", () => {
  it("refuses a run file rewritten over its budget with the size and time of the verified one, on every read, and reads it again once put back", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const good = readFileSync(g.runFile);
    pinTime(g.runFile);
    expect(readRunFile(g.runFile).file.revision).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) {
      // The same size and modification time as the run this process verified (and keeps) a moment ago.
      rewriteKeepingTime(g.runFile, tooDeep(good.length));
      expect(statSync(g.runFile).size).toBe(good.length);
      const error = thrown(() => readRunFile(g.runFile));
      expect(error).toBeInstanceOf(BudgetError);
      expect((error as BudgetError).overrun).toMatchObject({ limit: "depth", max: 64 });
      rewriteKeepingTime(g.runFile, good);
      expect(readRunFile(g.runFile).file.revision).toBeGreaterThan(0);
    }
  });

  it("gives bytes it refused before the same refusal without parsing them again, and judges other bytes of the same size and time afresh", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const good = readFileSync(g.runFile, "utf8");
    pinTime(g.runFile);
    expect(readRunFile(g.runFile).file.head).toBe((JSON.parse(good) as RunFile).head);
    const first = withOtherHead(good, "1");
    rewriteKeepingTime(g.runFile, first);
    const refused = thrown(() => readRunFile(g.runFile));
    expect(refused).toBeInstanceOf(IntegrityError);
    expect(refused.message).toMatch(/hash chain broken/);
    const parse = vi.spyOn(JSON, "parse");
    const again = thrown(() => readRunFile(g.runFile));
    // The same refusal, as a new error (a caller may change the one it caught), from the bytes' sha256 alone.
    expect(again).not.toBe(refused);
    expect(again).toBeInstanceOf(IntegrityError);
    expect(again.message).toBe(refused.message);
    expect((again as IntegrityError).details).toEqual((refused as IntegrityError).details);
    expect(parse.mock.calls.filter(([text]) => typeof text === "string" && text.length === first.length)).toHaveLength(0);
    // Other bytes of the same size and time: parsed and judged, here put back as the gate wrote them, so accepted.
    rewriteKeepingTime(g.runFile, good);
    expect(readRunFile(g.runFile).file.head).toBe((JSON.parse(good) as RunFile).head);
    // And a different forgery of the same size and time again: refused on its own account.
    rewriteKeepingTime(g.runFile, withOtherHead(good, "2"));
    expect(thrown(() => readRunFile(g.runFile)).message).toMatch(/hash chain broken/);
  });

  it("quotes the name the file was given this time, not the one a remembered refusal was made for", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    writeFileSync(g.runFile, `{"format":"twinlock-run/2","events":[1,2]}`);
    expect(thrown(() => readRunFile(g.runFile))).toBeInstanceOf(UsageError);
    const relative = `./${g.runFile.split("/").slice(-2).join("/")}`;
    const cwd = process.cwd();
    process.chdir(g.runFile.split("/").slice(0, -2).join("/"));
    try {
      expect(thrown(() => readRunFile(relative)).message).toContain(`run file ${relative} `);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe("a server reads a run file in slices", () => {
  it("lets other work run while it reads a run file larger than one slice, before it answers", async () => {
    // 3 million empty events (9 MB): over the budget after its first 300 KB, more than one slice.
    const g = await runWithEmptyEvents(3_000_000);
    const order: string[] = [];
    setImmediate(() => order.push("other work"));
    await expect(storeOf(g).read(g.runFile)).rejects.toBeInstanceOf(BudgetError);
    order.push("read answered");
    expect(order).toEqual(["other work", "read answered"]);
  });

  it("holds at most 4 run files' bytes at once however many reads are asked for together, and answers every one", async () => {
    const g = await runWithEmptyEvents(3_000_000);
    // Sampled between every two slices the reads take (each read yields to the event loop after its first slice).
    let most = 0;
    let sampling = true;
    const sample = () => {
      most = Math.max(most, runFileReadsInFlight());
      if (sampling) setImmediate(sample);
    };
    setImmediate(sample);
    try {
      const reads = Array.from({ length: 12 }, () =>
        readRunFileAsync(g.runFile).then(
          () => "read",
          (e: unknown) => e,
        ),
      );
      const answers = await Promise.all(reads);
      expect(answers.every((a) => a instanceof BudgetError)).toBe(true);
    } finally {
      sampling = false;
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(MAX_READS_IN_FLIGHT);
    expect(runFileReadsInFlight()).toBe(0);
  });

  it("answers what the synchronous read answers, for a verified run and for its refusal", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    expect((await readRunFileAsync(g.runFile)).file).toEqual(readRunFile(g.runFile).file);
    writeFileSync(g.runFile, withOtherHead(readFileSync(g.runFile, "utf8"), "1"));
    const sync = thrown(() => readRunFile(g.runFile));
    await expect(readRunFileAsync(g.runFile)).rejects.toThrow(sync.message);
  });
});

describe("a run that grew from one this process verified", () => {
  it("gets from a check of only its new events the verdict a check of every event gives, whatever was changed in it", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const before = readRunFile(g.runFile).file;
    await freeze(g);
    const grown = JSON.parse(readFileSync(g.runFile, "utf8")) as RunFile;
    expect(grown.events.length).toBeGreaterThan(before.events.length);
    const verified: VerifiedRun = { run: before, replayed: replayEvents(before.events) };
    const field = fc.constantFrom("actor", "at", "type", "prev", "seq", "data");
    fc.assert(
      fc.property(fc.nat(grown.events.length - 1), field, fc.string({ maxLength: 8 }), (index, key, value) => {
        const forged = structuredClone(grown);
        (forged.events[index] as unknown as Record<string, unknown>)[key] = key === "seq" ? Number(value.length) : value;
        expect(verifyRunFile(forged, verified)).toEqual(verifyRunFile(forged));
      }),
      { numRuns: 60 },
    );
    expect(verifyRunFile(grown, verified)).toEqual(verifyRunFile(grown));
    expect(verifyRunFile(grown, verified).ok).toBe(true);
  });
});

/** Wait until a file's last change is past the time a read trusts its identity after (two seconds). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2_100));

describe("an unchanged run file is known by its identity, never by its size and time alone", () => {
  it("reads a run file whose last change is settled once, and answers the next reads from its inode, size and times", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    await settle();
    const first = readRunFile(g.runFile).file;
    const reuses = runFileIdentityReuses();
    expect(readRunFile(g.runFile).file).toBe(first);
    expect((await readRunFileAsync(g.runFile)).file).toBe(first);
    expect(runFileIdentityReuses()).toBe(reuses + 2);
  });

  it("reads again, and refuses, a settled run file rewritten with other bytes of the same size and time", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const good = readFileSync(g.runFile);
    pinTime(g.runFile);
    await settle();
    expect(readRunFile(g.runFile).file.revision).toBeGreaterThan(0);
    expect(readRunFile(g.runFile).file.revision).toBeGreaterThan(0);
    const reuses = runFileIdentityReuses();
    // The same inode, size and modification time: only the change time, which no call sets back, tells.
    rewriteKeepingTime(g.runFile, tooDeep(good.length));
    expect(thrown(() => readRunFile(g.runFile))).toBeInstanceOf(BudgetError);
    await expect(readRunFileAsync(g.runFile)).rejects.toBeInstanceOf(BudgetError);
    expect(runFileIdentityReuses()).toBe(reuses);
  });

  it("refuses a settled run file of 200,000 empty events again from its identity, and reads it afresh once rewritten with the same size and time", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const good = readFileSync(g.runFile);
    const text = `{"events":[{}${",{}".repeat(199_999)}]}`;
    writeFileSync(g.runFile, text.padEnd(Math.max(text.length, good.length), " "));
    pinTime(g.runFile);
    await settle();
    const first = thrown(() => readRunFile(g.runFile));
    expect(first).toBeInstanceOf(BudgetError);
    const reuses = runFileIdentityReuses();
    const again = thrown(() => readRunFile(g.runFile));
    expect(again).toBeInstanceOf(BudgetError);
    expect(again.message).toBe(first.message);
    await expect(readRunFileAsync(g.runFile)).rejects.toThrow(first.message);
    expect(runFileIdentityReuses()).toBe(reuses + 2);
    // The verified run's bytes, padded to the same size, with the same modification time: read and verified again.
    rewriteKeepingTime(g.runFile, Buffer.concat([good, Buffer.alloc(statSync(g.runFile).size - good.length, 0x20)]));
    expect(readRunFile(g.runFile).file.revision).toBeGreaterThan(0);
  });

  it("never answers from the identity of a file changed just before its read (a change in the same clock tick would keep it)", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const reuses = runFileIdentityReuses();
    for (let i = 0; i < 3; i++) readRunFile(g.runFile);
    await readRunFileAsync(g.runFile);
    expect(runFileIdentityReuses()).toBe(reuses);
  });
});

describe("a run file written in chunks", () => {
  it("is, character for character, the text the run file's serializer gives, for any JSON object and for a real run", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const run = readRunFile(g.runFile).file;
    expect([...runFileChunks(run)].join("")).toBe(serializeRunFile(run));
    const member = fc.oneof(fc.jsonValue({ maxDepth: 5 }), fc.constant(undefined));
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(member, fc.array(member), fc.dictionary(fc.string(), member))),
        (value) => {
          const asRun = value as unknown as RunFile;
          expect([...runFileChunks(asRun)].join("")).toBe(serializeRunFile(asRun));
        },
      ),
      { numRuns: 300 },
    );
  });
});
