import type { CapabilityGraph } from "./build-graph.js";

export const GRAPH_FORMATS = ["json", "dot", "mermaid"] as const;
export type GraphFormat = (typeof GRAPH_FORMATS)[number];

/** Render the graph as text; the same graph always gives the same bytes, ending in a newline. */
export function renderGraph(graph: CapabilityGraph, format: GraphFormat): string {
  if (format === "json") return `${JSON.stringify(graph, null, 2)}\n`;
  if (format === "dot") return renderDot(graph);
  return renderMermaid(graph);
}

/** The format a file name implies, if any. */
export function formatOfFile(file: string): GraphFormat | undefined {
  if (file.endsWith(".json")) return "json";
  if (file.endsWith(".dot") || file.endsWith(".gv")) return "dot";
  if (file.endsWith(".mmd") || file.endsWith(".mermaid")) return "mermaid";
  return undefined;
}

const EDGE_STYLE: Record<string, string> = {
  requires: "solid",
  related: "dotted",
  handoff: "bold",
  plan_review_gate: "dashed",
  exact_twin_execution: "bold",
};

function renderDot(graph: CapabilityGraph): string {
  const q = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  const lines = [`digraph ${q(graph.suite_id ?? "suite")} {`, "  rankdir=LR;", "  node [shape=box];"];
  for (const n of graph.nodes) {
    // Escape each part, then join with DOT's own line-break escape.
    const label = [n.id, n.title ?? "", `(${n.role ?? "no role"})`].map((p) => q(p).slice(1, -1)).join("\\n");
    lines.push(`  ${q(n.id)} [label="${label}"];`);
  }
  for (const e of graph.edges) {
    lines.push(`  ${q(e.from)} -> ${q(e.to)} [label=${q(e.kind)}, style=${EDGE_STYLE[e.kind] ?? "solid"}];`);
  }
  lines.push("}");
  return `${lines.join("\n")}\n`;
}

function renderMermaid(graph: CapabilityGraph): string {
  const node = (id: string) => id.replace(/[^A-Za-z0-9_]/g, "_");
  const text = (s: string) => s.replace(/["<>]/g, "'");
  const lines = ["flowchart LR"];
  for (const n of graph.nodes) lines.push(`  ${node(n.id)}["${text(`${n.id}: ${n.title ?? ""} (${n.role ?? "no role"})`)}"]`);
  for (const e of graph.edges) {
    const arrow = e.kind === "related" ? "-.->" : e.kind === "requires" ? "-->" : "==>";
    lines.push(`  ${node(e.from)} ${arrow}|${e.kind}| ${node(e.to)}`);
  }
  return `${lines.join("\n")}\n`;
}
