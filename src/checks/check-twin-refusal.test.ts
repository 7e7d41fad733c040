import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadSuite } from "../suite/load-suite.js";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import { BASE_FILES, baseSuite } from "../test-support/prompt-builder.js";
import { EXAMPLE_SUITE } from "../test-support/temp-suite.js";
import type { ExactTwin } from "../twin/resolve-exact-twin.js";
import { checkPairs } from "./check-pairs.js";
import { checkTwinRefusal } from "./check-twin-refusal.js";

// The real judgement is exact, so TWIN_REFUSAL cannot fire through it. To test
// the check's contract (it reports any wrong judgement of the runtime), the
// accepted ID or the judgement can be swapped for a faulty one per test.
type Verdict = { ok: true } | { ok: false; reason: string };
type Judge = (twin: ExactTwin, id: string) => Verdict;
const faulty = vi.hoisted(() => ({
  judge: undefined as ((twin: ExactTwin, id: string) => { ok: true } | { ok: false; reason: string }) | undefined,
  accepted: undefined as ((twin: ExactTwin) => string) | undefined,
}));
vi.mock("../twin/resolve-exact-twin.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../twin/resolve-exact-twin.js")>();
  const acceptedExecutorId = (twin: ExactTwin) => (faulty.accepted ? faulty.accepted(twin) : real.acceptedExecutorId(twin));
  return {
    ...real,
    acceptedExecutorId,
    judgeRequestedExecutor: (twin: ExactTwin, id: string) => {
      if (faulty.judge) return faulty.judge(twin, id);
      // The runtime's structure: accept exactly the accepted ID.
      return id === acceptedExecutorId(twin) ? { ok: true } : { ok: false, reason: "refused" };
    },
  };
});

afterEach(() => {
  faulty.judge = undefined;
  faulty.accepted = undefined;
});

const refusalOf = (files = baseSuite()) => {
  const suite = suiteFromFiles(files);
  return checkTwinRefusal(suite, checkPairs(suite).pairs);
};

/** The old check: every pair against every executive, which grows with the square of the suite. */
function exhaustive(files: Record<string, string>, judge: Judge): string[] {
  const suite = suiteFromFiles(files);
  const executives = suite.prompts.filter((p) => p.role === "executive").map((p) => p.id);
  const wrong: string[] = [];
  for (const twin of checkPairs(suite).pairs)
    for (const id of executives) if (judge(twin, id).ok !== (id === twin.executor.id)) wrong.push(twin.planner.id);
  return [...new Set(wrong)].sort();
}

describe("checkTwinRefusal with the runtime's real judgement", () => {
  it("proves the example suite's 6 pairs with a handful of judgements per pair, not one per pair × executive", () => {
    const suite = loadSuite(EXAMPLE_SUITE);
    const result = checkTwinRefusal(suite, checkPairs(suite).pairs);
    expect(result.diagnostics).toEqual([]);
    // Per pair: the twin, its neighbours in ID order, three near misses and the planner: at most 7.
    expect(result.judged).toBeGreaterThanOrEqual(6 * 5);
    expect(result.judged).toBeLessThanOrEqual(6 * 7);
  });

  it("judges nothing when there are no pairs", () => {
    const suite = suiteFromFiles(baseSuite());
    expect(checkTwinRefusal(suite, [])).toEqual({ diagnostics: [], judged: 0 });
  });
});

describe("checkTwinRefusal against a faulty runtime (the check's contract)", () => {
  it("reports a runtime that accepts another executive for a planner, on the planner's file", () => {
    faulty.accepted = (twin) => (twin.planner.id === "MD-10" ? "MD-20" : twin.executor.id);
    const { diagnostics } = refusalOf();
    expect(diagnostics).toEqual([
      expect.objectContaining({ code: "TWIN_REFUSAL", severity: "error", file: BASE_FILES["MD-10"], line: 1, promptId: "MD-10" }),
      expect.objectContaining({ code: "TWIN_REFUSAL", promptId: "MD-10" }),
    ]);
    expect(diagnostics.map((d) => d.message)).toEqual([
      "the runtime accepts MD-20 as executor for MD-10; only MD-11 may be accepted",
      "the runtime refuses MD-11 as executor for MD-10; only MD-11 may be accepted",
    ]);
  });

  it("reports a judgement that refuses the exact twin", () => {
    faulty.judge = () => ({ ok: false, reason: "refuse all" });
    expect(refusalOf().diagnostics.map((d) => d.message)).toEqual([
      "the runtime refuses MD-11 as executor for MD-10; only MD-11 may be accepted",
      "the runtime refuses MD-13 as executor for MD-12; only MD-13 may be accepted",
    ]);
  });

  it("reports a judgement that ignores case or padding, or accepts the planner itself", () => {
    faulty.judge = (twin, id) => (id.trim().toUpperCase() === twin.executor.id ? { ok: true } : { ok: false, reason: "no" });
    expect(refusalOf().diagnostics.map((d) => d.message)).toContain(
      "the runtime accepts  MD-11 as executor for MD-10; only MD-11 may be accepted",
    );
    faulty.judge = (twin, id) => (id === twin.executor.id || id === twin.planner.id ? { ok: true } : { ok: false, reason: "no" });
    expect(refusalOf().diagnostics.map((d) => d.message)).toContain(
      "the runtime accepts MD-10 as executor for MD-10; only MD-11 may be accepted",
    );
  });

  it("finds a wrong pair exactly when judging every pair × executive would (any accepted ID the runtime could hold)", () => {
    const files = baseSuite();
    const executives = ["MD-11", "MD-13", "MD-20"];
    fc.assert(
      fc.property(fc.constantFrom(...executives), fc.constantFrom(...executives), (forTen, forTwelve) => {
        const accepted = (twin: ExactTwin) => (twin.planner.id === "MD-10" ? forTen : forTwelve);
        faulty.accepted = accepted;
        const linear = [...new Set(refusalOf(files).diagnostics.map((d) => d.promptId as string))].sort();
        const judge: Judge = (twin, id) => (id === accepted(twin) ? { ok: true } : { ok: false, reason: "no" });
        expect(linear).toEqual(exhaustive(files, judge));
      }),
      { numRuns: 30 },
    );
  });
});
