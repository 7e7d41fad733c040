import { describe, expect, it } from "vitest";
import type { CapabilityGraph } from "./build-graph.js";
import { formatOfFile, renderGraph } from "./render-graph.js";

const graph: CapabilityGraph = {
  format: "twinlock-graph/1",
  suite_id: "s1",
  nodes: [
    { id: "MD-29", title: 'Debug "planner"', role: "investigative", category: "debugging", risk_level: "medium", file: "a.md" },
    { id: "MD-30", title: "Debug <executor>", role: "executive", category: "debugging", risk_level: "medium", file: "b.md" },
    { id: "MD-01", title: null, role: null, category: null, risk_level: null, file: "c.md" },
  ],
  edges: [
    { from: "MD-29", to: "MD-01", kind: "requires" },
    { from: "MD-29", to: "MD-30", kind: "related" },
    { from: "MD-29", to: "MD-30", kind: "handoff" },
    { from: "MD-29", to: "MD-30", kind: "plan_review_gate" },
    { from: "MD-29", to: "MD-30", kind: "exact_twin_execution" },
  ],
};

describe("renderGraph", () => {
  it("renders JSON that parses back to the same graph, ending in a newline", () => {
    const text = renderGraph(graph, "json");
    expect(JSON.parse(text)).toEqual(graph);
    expect(text.endsWith("}\n")).toBe(true);
  });

  it("renders DOT with a header, one line per node, and one styled line per edge", () => {
    const lines = renderGraph(graph, "dot").split("\n");
    expect(lines.slice(0, 3)).toEqual(['digraph "s1" {', "  rankdir=LR;", "  node [shape=box];"]);
    expect(lines.filter((l) => l.includes(" [label=") && !l.includes("->"))).toHaveLength(3);
    expect(lines.slice(6)).toEqual([
      '  "MD-29" -> "MD-01" [label="requires", style=solid];',
      '  "MD-29" -> "MD-30" [label="related", style=dotted];',
      '  "MD-29" -> "MD-30" [label="handoff", style=bold];',
      '  "MD-29" -> "MD-30" [label="plan_review_gate", style=dashed];',
      '  "MD-29" -> "MD-30" [label="exact_twin_execution", style=bold];',
      "}",
      "",
    ]);
  });

  it("escapes a double quote inside a DOT label", () => {
    expect(renderGraph(graph, "dot")).toContain('Debug \\"planner\\"');
  });

  // The label's own line breaks must reach Graphviz as the `\n` escape, not be
  // escaped a second time into a literal "\\n".
  it("breaks DOT node labels into lines with Graphviz's \\n escape, not a literal backslash", () => {
    const lines = renderGraph(graph, "dot").split("\n");
    expect(lines[3]).toBe('  "MD-29" [label="MD-29\\nDebug \\"planner\\"\\n(investigative)"];');
    expect(lines[5]).toBe('  "MD-01" [label="MD-01\\n\\n(no role)"];');
  });

  it("renders Mermaid with safe node names and no quotes or angle brackets inside labels", () => {
    const text = renderGraph(graph, "mermaid");
    expect(text.split("\n")).toEqual([
      "flowchart LR",
      `  MD_29["MD-29: Debug 'planner' (investigative)"]`,
      `  MD_30["MD-30: Debug 'executor' (executive)"]`,
      `  MD_01["MD-01:  (no role)"]`,
      "  MD_29 -->|requires| MD_01",
      "  MD_29 -.->|related| MD_30",
      "  MD_29 ==>|handoff| MD_30",
      "  MD_29 ==>|plan_review_gate| MD_30",
      "  MD_29 ==>|exact_twin_execution| MD_30",
      "",
    ]);
  });

  it("renders the same bytes every time, in every format", () => {
    for (const format of ["json", "dot", "mermaid"] as const)
      expect(renderGraph(graph, format)).toBe(renderGraph(structuredClone(graph), format));
  });
});

describe("formatOfFile", () => {
  it("takes the format from the file name's extension", () => {
    expect(["g.json", "g.dot", "g.gv", "g.mmd", "g.mermaid", "g.txt"].map(formatOfFile)).toEqual([
      "json",
      "dot",
      "dot",
      "mermaid",
      "mermaid",
      undefined,
    ]);
  });
});
