import { describe, expect, it } from "vitest";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import { baseSuite } from "../test-support/prompt-builder.js";
import { type PairSpec, promptFileName, scaffoldExecutor, scaffoldPlanner } from "./scaffold-pair.js";
import { validateSuite } from "./validate-suite.js";

const spec: PairSpec = {
  plannerId: "MD-41",
  executorId: "MD-42",
  plannerTitle: "Cache invalidation planner",
  executorTitle: "Cache invalidation executor",
  category: "caching",
  riskLevel: "high",
  requires: ["MD-01"],
};

describe("scaffoldPlanner and scaffoldExecutor", () => {
  it("write a pair that validates clean beside other pairs, adding one genuine pair", () => {
    const files = { ...baseSuite(), "caching/md-41.md": scaffoldPlanner(spec), "caching/md-42.md": scaffoldExecutor(spec) };
    const report = validateSuite(suiteFromFiles(files), { expectPairs: 3 });
    expect(report.diagnostics).toEqual([]);
    expect(report.pairs.map((p) => `${p.planner}->${p.executor}`)).toContain("MD-41->MD-42");
  });

  it("put the planner first in the executor's requires, without repeating it", () => {
    const text = scaffoldExecutor({ ...spec, requires: ["MD-41", "MD-01"] });
    expect(text).toContain("requires: [MD-41, MD-01]");
  });

  it("quote titles safely, so a colon or quotes in a title stay data", () => {
    const odd = { ...spec, plannerTitle: 'Plan: "fix" it', executorTitle: "Run: it #now" };
    const files = { ...baseSuite(), "c/md-41.md": scaffoldPlanner(odd), "c/md-42.md": scaffoldExecutor(odd) };
    const suite = suiteFromFiles(files);
    expect(suite.byId.get("MD-41")?.title).toBe('Plan: "fix" it');
    expect(suite.byId.get("MD-42")?.title).toBe("Run: it #now");
    expect(validateSuite(suite, { expectPairs: 3 }).diagnostics).toEqual([]);
  });
});

describe("promptFileName", () => {
  it("joins the lower-cased ID and a slug of the title", () => {
    expect(promptFileName("MD-41", "Cache invalidation planner")).toBe("md-41-cache-invalidation-planner.md");
  });

  it("drops characters that are not letters or digits, and never leaves a trailing dash", () => {
    expect(promptFileName("MD-41", "  ../Évil / name!! ")).toBe("md-41-vil-name.md");
    expect(promptFileName("MD-41", "!!!")).toBe("md-41.md");
  });

  it("keeps file names short", () => {
    expect(promptFileName("MD-41", "x".repeat(500)).length).toBeLessThanOrEqual("md-41-".length + 48 + ".md".length);
  });
});
