import { writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { checkReadiness } from "../handoff/check-readiness.js";
import { readRunFile } from "../store/run-file.js";
import { parseSuiteConfig } from "../suite/load-suite.js";
import { makeRunTempDir, removeGateRuns } from "../test-support/run-fixture.js";
import { BUDGETS, BudgetError, JsonShapeScanner, requireJsonWithin, scanJsonShape } from "./budgets.js";

afterAll(removeGateRuns);

/** Depth and largest container of a parsed JSON value, walked without recursion: what the scan must find from the text. */
function shapeOf(value: unknown): { depth: number; elements: number } {
  let depth = 0;
  let elements = 0;
  const stack: Array<{ v: unknown; d: number }> = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: unknown; d: number };
    if (v === null || typeof v !== "object") continue;
    depth = Math.max(depth, d + 1);
    const children = Object.values(v as object);
    elements = Math.max(elements, children.length);
    for (const c of children) stack.push({ v: c, d: d + 1 });
  }
  return { depth, elements };
}

const runs = Number(process.env.FUZZ_RUNS ?? 12);

/** JSON text over one limit of `budget`, with the excess put somewhere inside an otherwise ordinary document. */
function oversized(budget: { depth: number; elements: number }): fc.Arbitrary<{ text: string; limit: "depth" | "elements" }> {
  const deep = fc
    .record({ n: fc.integer({ min: budget.depth + 1, max: budget.depth * 50 }), open: fc.constantFrom("[", '{"k":') })
    .map(({ n, open }) => ({ text: `${open.repeat(n)}0${(open === "[" ? "]" : "}").repeat(n)}`, limit: "depth" as const }));
  const wide = fc
    .record({ n: fc.integer({ min: budget.elements + 1, max: budget.elements * 3 }), item: fc.constantFrom("{}", "0", '""', "[]", "null") })
    .map(({ n, item }) => ({ text: `[${`${item},`.repeat(n - 1)}${item}]`, limit: "elements" as const }));
  return fc
    .record({ inner: fc.oneof(deep, wide), key: fc.constantFrom("events", "state", "format", "actions", "evidence", "x") })
    .map(({ inner, key }) => ({ text: `{"format":"twinlock-run/2","${key}":${inner.text}}`, limit: inner.limit }));
}

describe("the scan before parsing", () => {
  it("finds the depth and largest array or object of any JSON text, as a walk of the parsed value does", () => {
    fc.assert(
      fc.property(fc.jsonValue({ depthSize: "medium" }), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 1 : undefined);
        expect(scanJsonShape(text, { depth: 1000, elements: 1_000_000 })).toEqual(shapeOf(value));
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    );
  });

  it("finds in slices what it finds in one piece, however the text is cut (an escape ending one slice included)", () => {
    const texts = fc.oneof(
      fc.json({ depthSize: "medium" }),
      // Strings of quotes, backslashes and brackets: escapes and string ends wherever a cut may fall.
      fc.array(fc.constantFrom("[", "]", "{", "}", ",", '"', "\\", "a", " "), { maxLength: 200 }).map((cs) => cs.join("")),
    );
    const small = { depth: 6, elements: 8 };
    fc.assert(
      fc.property(texts, fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(), (text, cuts, tight) => {
        const bytes = Buffer.from(text, "utf8");
        const stopAt = tight ? small : BUDGETS.runFile;
        // Some texts fed a byte at a time: every cut there is.
        const at =
          cuts.length === 0
            ? Array.from({ length: bytes.length }, (_, i) => i)
            : [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const scanner = new JsonShapeScanner(stopAt);
        let over: ReturnType<JsonShapeScanner["feed"]>;
        let from = 0;
        for (const to of [...at, bytes.length]) {
          over ??= scanner.feed(bytes.subarray(from, to));
          from = to;
        }
        expect(over ?? scanner.finish()).toEqual(scanJsonShape(text, stopAt));
      }),
      { numRuns: 400 },
    );
  });

  it("counts nothing inside strings, escaped quotes included", () => {
    expect(scanJsonShape(JSON.stringify({ a: '[[[{"x":1,2,3}]]] \\" ,,,' }))).toEqual({ depth: 1, elements: 1 });
  });

  it("names the limit and what it found", () => {
    expect(() => requireJsonWithin(BUDGETS.handoffRecord, "[".repeat(70), "x.json")).toThrow(
      "x.json nests arrays and objects more than 64 levels deep, over the limit for a handoff record",
    );
  });
});

describe("every reader refuses input over its budget cleanly, whatever its shape", () => {
  it("a run file: a BudgetError naming the limit it broke, never a crash", () => {
    const dir = makeRunTempDir("twinlock-budget-");
    const file = path.join(dir, "run.json");
    fc.assert(
      fc.property(oversized(BUDGETS.runFile), ({ text, limit }) => {
        writeFileSync(file, text);
        let error: unknown;
        try {
          readRunFile(file);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(BudgetError);
        expect((error as BudgetError).overrun.limit).toBe(limit);
        expect((error as Error).message).toContain(`over the limit for a run file`);
      }),
      { numRuns: runs },
    );
  });

  it("a run file within the budget but of random bad elements: a UsageError or IntegrityError, never a crash", () => {
    const dir = makeRunTempDir("twinlock-budget-");
    const file = path.join(dir, "run.json");
    const junk = fc.oneof(fc.constant({}), fc.constant([]), fc.jsonValue({ maxDepth: 3 }));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60_000 }), junk, fc.constantFrom("events", "state"), (n, item, key) => {
        const items = Array.from({ length: n }, () => item);
        const run = { format: "twinlock-run/2", revision: 1, head: `sha256:${"0".repeat(64)}`, state: {}, events: [{}], [key]: items };
        writeFileSync(file, JSON.stringify(run));
        let error: unknown;
        try {
          readRunFile(file);
        } catch (e) {
          error = e;
        }
        expect(error instanceof UsageError || error instanceof IntegrityError, String(error)).toBe(true);
      }),
      { numRuns: runs },
    );
  });

  it("a handoff record: one problem naming the limit, never a crash", () => {
    const dir = makeRunTempDir("twinlock-budget-");
    writeDemoHandoff(dir, demoHandoffRecords());
    fc.assert(
      fc.property(oversized(BUDGETS.handoffRecord), fc.constantFrom("action_plan.json", "evidence_index.json"), ({ text }, name) => {
        writeFileSync(path.join(dir, name), text);
        const problems = checkReadiness(dir).problems.filter((p) => p.file === name);
        expect(problems).toHaveLength(1);
        expect(problems[0]?.message).toContain("over the limit for a handoff record");
      }),
      { numRuns: runs },
    );
  });

  it("twinlock.yaml: one diagnostic naming the limit, never a crash", () => {
    const wide = fc.integer({ min: 10_001, max: 30_000 }).map((n) => `revoked:\n${"  - x\n".repeat(n)}`);
    const flow = fc.integer({ min: 10_001, max: 30_000 }).map((n) => `revoked: [${"x,".repeat(n - 1)}x]\n`);
    const deep = fc.integer({ min: 65, max: 3000 }).map((n) => `revoked: ${"[".repeat(n)}${"]".repeat(n)}\n`);
    fc.assert(
      fc.property(fc.oneof(wide, flow, deep), (text) => {
        const { diagnostics } = parseSuiteConfig(text);
        expect(diagnostics).toHaveLength(1);
        expect(diagnostics[0]?.message).toContain("over the limit for a twinlock.yaml");
      }),
      { numRuns: runs },
    );
  });
});
