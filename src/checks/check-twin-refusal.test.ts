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
// judgement can be swapped for a faulty one per test; by default it is real.
type Judge = (twin: ExactTwin, id: string) => { ok: true } | { ok: false; reason: string };
const faulty = vi.hoisted(() => ({ judge: undefined as Judge | undefined }));
vi.mock("../twin/resolve-exact-twin.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../twin/resolve-exact-twin.js")>();
  return {
    ...real,
    judgeRequestedExecutor: (twin: ExactTwin, id: string) =>
      faulty.judge ? faulty.judge(twin, id) : real.judgeRequestedExecutor(twin, id),
  };
});
const useJudge = (judge: Judge) => {
  faulty.judge = judge;
};

afterEach(() => {
  faulty.judge = undefined;
});

const refusalOf = (files = baseSuite()) => {
  const suite = suiteFromFiles(files);
  return checkTwinRefusal(suite, checkPairs(suite).pairs);
};

describe("checkTwinRefusal with the runtime's real judgement", () => {
  it("judges every pair against every executive of the example suite (6 pairs × 7 executives) and finds nothing", () => {
    const suite = loadSuite(EXAMPLE_SUITE);
    const result = checkTwinRefusal(suite, checkPairs(suite).pairs);
    expect(result).toEqual({ diagnostics: [], judged: 42 });
  });

  it("judges 2 pairs × 3 executives in the base suite", () => {
    expect(refusalOf()).toEqual({ diagnostics: [], judged: 6 });
  });

  it("judges nothing when there are no pairs", () => {
    const suite = suiteFromFiles(baseSuite());
    expect(checkTwinRefusal(suite, [])).toEqual({ diagnostics: [], judged: 0 });
  });
});

describe("checkTwinRefusal against a faulty judgement (the check's contract)", () => {
  it("reports a judgement that accepts another executive of the same category, on the planner's file", () => {
    useJudge((twin, id) => {
      const requested = twin.planner.id === "MD-10" && id === "MD-20";
      return requested || id === twin.executor.id ? { ok: true } : { ok: false, reason: "no" };
    });
    const { diagnostics } = refusalOf();
    expect(diagnostics).toEqual([
      expect.objectContaining({ code: "TWIN_REFUSAL", severity: "error", file: BASE_FILES["MD-10"], line: 1, promptId: "MD-10" }),
    ]);
    expect(diagnostics[0]?.message).toBe("the runtime accepts MD-20 as executor for MD-10; only MD-11 may be accepted");
  });

  it("reports a judgement that refuses the exact twin", () => {
    useJudge(() => ({ ok: false, reason: "refuse all" }));
    const { diagnostics } = refusalOf();
    expect(diagnostics.map((d) => d.message)).toEqual([
      "the runtime refuses MD-11 as executor for MD-10; only MD-11 may be accepted",
      "the runtime refuses MD-13 as executor for MD-12; only MD-13 may be accepted",
    ]);
  });

  it("cannot see a case-insensitive judgement, since it asks only about the suite's own executive IDs (resolve-exact-twin tests cover case)", () => {
    useJudge((twin, id) => (id.toLowerCase() === twin.executor.id.toLowerCase() ? { ok: true } : { ok: false, reason: "no" }));
    expect(refusalOf().diagnostics).toEqual([]);
  });
});
