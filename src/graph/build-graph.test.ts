import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { checkPairs } from "../checks/check-pairs.js";
import { indexSuite, loadSuite, type Suite } from "../suite/load-suite.js";
import { renderModel, suiteModelArb } from "../test-support/arbitrary-suite.js";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import { BASE_FILES, baseSuite, executorText, unpairedText } from "../test-support/prompt-builder.js";
import { EXAMPLE_SUITE, removeTempDirs, writeSuite } from "../test-support/temp-suite.js";
import { buildGraph, compareIds } from "./build-graph.js";
import { renderGraph } from "./render-graph.js";

afterAll(removeTempDirs);

const graphOf = (suite: Suite) => buildGraph(suite, checkPairs(suite).pairs);

describe("buildGraph", () => {
  it("has a node per prompt and, for each genuine pair, handoff, plan_review_gate and exact_twin_execution edges", () => {
    const graph = graphOf(suiteFromFiles(baseSuite(), { suite_id: "fixture" }));
    expect(graph.format).toBe("twinlock-graph/1");
    expect(graph.suite_id).toBe("fixture");
    expect(graph.nodes.map((n) => n.id)).toEqual(["MD-01", "MD-10", "MD-11", "MD-12", "MD-13", "MD-20"]);
    expect(graph.edges.filter((e) => e.from === "MD-10")).toEqual([
      { from: "MD-10", to: "MD-01", kind: "requires" },
      { from: "MD-10", to: "MD-11", kind: "handoff" },
      { from: "MD-10", to: "MD-11", kind: "plan_review_gate" },
      { from: "MD-10", to: "MD-11", kind: "exact_twin_execution" },
    ]);
    expect(graph.edges).toContainEqual({ from: "MD-11", to: "MD-10", kind: "requires" });
  });

  it("draws no pair edges for a broken pair and no edges to unknown prompts", () => {
    const files = {
      ...baseSuite(),
      [BASE_FILES["MD-11"]]: executorText("MD-11", "MD-10", { frontmatter: { exact_twin_only: false } }),
      [BASE_FILES["MD-20"]]: unpairedText("MD-20", "executive", {
        frontmatter: { requires: ["MD-01", "MD-99"], related_prompts: ["MD-10"] },
      }),
    };
    const graph = graphOf(suiteFromFiles(files));
    expect(graph.edges.filter((e) => e.from === "MD-10").map((e) => e.kind)).toEqual(["requires"]);
    expect(graph.edges.some((e) => e.to === "MD-99")).toBe(false);
    expect(graph.edges).toContainEqual({ from: "MD-20", to: "MD-10", kind: "related" });
  });

  it("builds the same bytes twice from the example suite", () => {
    const a = renderGraph(graphOf(loadSuite(EXAMPLE_SUITE)), "json");
    const b = renderGraph(graphOf(loadSuite(EXAMPLE_SUITE)), "json");
    expect(a).toBe(b);
  });

  it("builds the same bytes whatever order the files were created on disk", () => {
    const files = Object.entries(baseSuite());
    const forward = writeSuite(Object.fromEntries(files));
    const backward = writeSuite(Object.fromEntries([...files].reverse()));
    const render = (root: string) => renderGraph(graphOf(loadSuite(root)), "json");
    expect(render(backward)).toBe(render(forward));
  });

  it("builds the same graph from a generated suite whatever order its prompts are indexed in", () => {
    fc.assert(
      fc.property(suiteModelArb(), fc.func(fc.integer()), (model, key) => {
        const suite = suiteFromFiles(renderModel(model));
        const shuffled = [...suite.prompts].sort((a, b) => key(a.id) - key(b.id));
        const again = indexSuite(suite.root, shuffled, suite.config);
        expect(renderGraph(graphOf(again), "json")).toBe(renderGraph(graphOf(suite), "json"));
      }),
      { numRuns: 50 },
    );
  });
});

describe("compareIds", () => {
  it("orders by prefix, then by number (MD-2 before MD-10)", () => {
    expect(["MD-10", "AB-3", "MD-2", "MD-1", "Z-0"].sort(compareIds)).toEqual(["AB-3", "MD-1", "MD-2", "MD-10", "Z-0"]);
  });

  it("gives a total order even for equal numbers written differently", () => {
    expect(["MD-01", "MD-1"].sort(compareIds)).toEqual(["MD-01", "MD-1"]);
    expect(["MD-1", "MD-01"].sort(compareIds)).toEqual(["MD-01", "MD-1"]);
  });
});
