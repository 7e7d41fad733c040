import { beforeAll, describe, expect, it } from "vitest";
import { loadSuite, type Suite } from "../suite/load-suite.js";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import { BASE_FILES, baseSuite, executorText, plannerText } from "../test-support/prompt-builder.js";
import { EXAMPLE_SUITE } from "../test-support/temp-suite.js";
import { type ExactTwin, judgeRequestedExecutor, resolveExactTwin } from "./resolve-exact-twin.js";

let example: Suite;
let md29: ExactTwin;

beforeAll(() => {
  example = loadSuite(EXAMPLE_SUITE);
  const resolved = resolveExactTwin(example, "MD-29");
  if (!resolved.ok) throw new Error(`MD-29 does not resolve: ${resolved.reasons.join("; ")}`);
  md29 = resolved.twin;
});

describe("resolveExactTwin on the example suite (the source document's cases)", () => {
  it("resolves MD-29 to exactly MD-30", () => {
    expect(md29.planner.id).toBe("MD-29");
    expect(md29.executor.id).toBe("MD-30");
    expect(md29.executor.title).toBe("Debugging fix executor");
  });

  it("resolves every planner of the example suite to the executor its paired_prompt_id names", () => {
    const planners = example.prompts.filter((p) => p.role === "investigative");
    expect(planners.length).toBe(6);
    for (const planner of planners) {
      const resolved = resolveExactTwin(example, planner.id);
      expect(resolved.ok ? resolved.twin.executor.id : resolved.reasons).toBe(planner.pairedPromptId);
    }
  });

  it("refuses to resolve an executor, an unpaired prompt, an unknown ID or a lower-case ID as a planner", () => {
    for (const id of ["MD-30", "MD-26", "MD-01", "MD-99", "md-29"]) {
      const resolved = resolveExactTwin(example, id);
      expect(resolved.ok, id).toBe(false);
      if (!resolved.ok) expect(resolved.reasons.join(" ")).toContain(id);
    }
  });
});

describe("judgeRequestedExecutor on the example suite", () => {
  it("accepts MD-30 as executor for MD-29", () => {
    expect(judgeRequestedExecutor(md29, "MD-30")).toEqual({ ok: true });
  });

  it("refuses MD-28 as executor for MD-29, naming the request and the required exact twin", () => {
    const verdict = judgeRequestedExecutor(md29, "MD-28");
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.reason).toContain("Requested: MD-28");
    expect(verdict.reason).toContain("Required exact twin: MD-30");
  });

  it("refuses MD-26, an unpaired executive of the same debugging category, as executor for MD-29", () => {
    const md26 = example.byId.get("MD-26");
    expect(md26?.role).toBe("executive");
    expect(md26?.category).toBe(md29.planner.category);
    const verdict = judgeRequestedExecutor(md29, "MD-26");
    expect(verdict).toMatchObject({ ok: false });
    if (!verdict.ok) expect(verdict.reason).toContain("Required exact twin: MD-30");
  });

  it("refuses md-30, the twin's ID in another case", () => {
    expect(judgeRequestedExecutor(md29, "md-30").ok).toBe(false);
  });

  it("refuses near misses of MD-30: padding, a prefix, a suffix and a leading zero", () => {
    for (const id of [" MD-30", "MD-30 ", "MD-3", "MD-300", "MD-030", "MD-30\u0000", ""]) {
      expect(judgeRequestedExecutor(md29, id).ok, JSON.stringify(id)).toBe(false);
    }
  });

  it("accepts, across the whole example suite, each planner's twin and refuses every other executive", () => {
    const executives = example.prompts.filter((p) => p.role === "executive").map((p) => p.id);
    expect(executives).toContain("MD-26");
    for (const planner of example.prompts.filter((p) => p.role === "investigative")) {
      const resolved = resolveExactTwin(example, planner.id);
      if (!resolved.ok) throw new Error(resolved.reasons.join("; "));
      const accepted = executives.filter((id) => judgeRequestedExecutor(resolved.twin, id).ok);
      expect(accepted).toEqual([planner.pairedPromptId]);
    }
  });
});

describe("resolveExactTwin refuses any doubt", () => {
  it("refuses a planner whose executor does not name it back, listing the reason", () => {
    const suite = suiteFromFiles({ ...baseSuite(), [BASE_FILES["MD-11"]]: executorText("MD-11", "MD-12") });
    const resolved = resolveExactTwin(suite, "MD-10");
    expect(resolved.ok).toBe(false);
    if (!resolved.ok) expect(resolved.reasons.join("\n")).toMatch(/MD-11.*MD-10|MD-10.*MD-11/);
  });

  it("refuses a planner whose executor lacks one canonical key", () => {
    const suite = suiteFromFiles({
      ...baseSuite(),
      [BASE_FILES["MD-11"]]: executorText("MD-11", "MD-10", { frontmatter: { reviewed_handoff_required: undefined } }),
    });
    const resolved = resolveExactTwin(suite, "MD-10");
    expect(resolved.ok).toBe(false);
    if (!resolved.ok) expect(resolved.reasons.join("\n")).toContain("reviewed_handoff_required");
  });

  it("refuses a planner whose ID is declared by two files, naming both", () => {
    const suite = suiteFromFiles({ ...baseSuite(), "zz/md-10-again.md": plannerText("MD-10", "MD-11") });
    const resolved = resolveExactTwin(suite, "MD-10");
    expect(resolved.ok).toBe(false);
    if (!resolved.ok) {
      const text = resolved.reasons.join("\n");
      expect(text).toContain(BASE_FILES["MD-10"]);
      expect(text).toContain("zz/md-10-again.md");
    }
  });

  it("refuses a planner carrying an override key, even one naming its own twin", () => {
    const suite = suiteFromFiles({
      ...baseSuite(),
      [BASE_FILES["MD-10"]]: plannerText("MD-10", "MD-11", { frontmatter: { execution_twin: "MD-11" } }),
    });
    expect(resolveExactTwin(suite, "MD-10").ok).toBe(false);
  });

  it("still resolves an untouched pair when another pair of the suite is broken", () => {
    const suite = suiteFromFiles({ ...baseSuite(), [BASE_FILES["MD-11"]]: executorText("MD-11", "MD-12") });
    const resolved = resolveExactTwin(suite, "MD-12");
    expect(resolved.ok && resolved.twin.executor.id).toBe("MD-13");
  });
});
