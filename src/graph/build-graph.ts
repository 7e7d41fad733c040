import type { Suite } from "../suite/load-suite.js";
import type { ExactTwin } from "../twin/resolve-exact-twin.js";

export const EDGE_KINDS = ["requires", "related", "handoff", "plan_review_gate", "exact_twin_execution"] as const;
export type EdgeKind = (typeof EDGE_KINDS)[number];

export interface GraphNode {
  id: string;
  title: string | null;
  role: string | null;
  category: string | null;
  risk_level: string | null;
  file: string;
}

export interface GraphEdge {
  from: string;
  to: string;
  kind: EdgeKind;
}

/** The suite's capability graph: sorted, so the same suite always gives the same bytes. */
export interface CapabilityGraph {
  format: "twinlock-graph/1";
  suite_id: string | null;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/**
 * Build the graph of SPEC §3: a node per prompt; `requires` and `related`
 * edges to prompts that exist; and for each genuine pair the `handoff`,
 * `plan_review_gate` and `exact_twin_execution` edges from planner to executor.
 */
export function buildGraph(suite: Suite, pairs: readonly ExactTwin[]): CapabilityGraph {
  const nodes: GraphNode[] = [...suite.byId.values()].map((p) => ({
    id: p.id,
    title: p.title ?? null,
    role: p.role ?? null,
    category: p.category ?? null,
    risk_level: p.riskLevel ?? null,
    file: p.file,
  }));
  const edges: GraphEdge[] = [];
  const seen = new Set<string>();
  const add = (from: string, to: string, kind: EdgeKind) => {
    const key = `${from}\u0000${to}\u0000${kind}`;
    if (seen.has(key)) return;
    seen.add(key);
    edges.push({ from, to, kind });
  };
  for (const p of suite.byId.values()) {
    for (const id of p.requires) if (suite.byId.has(id) && id !== p.id) add(p.id, id, "requires");
    for (const id of p.relatedPrompts) if (suite.byId.has(id) && id !== p.id) add(p.id, id, "related");
  }
  for (const { planner, executor } of pairs) {
    add(planner.id, executor.id, "handoff");
    add(planner.id, executor.id, "plan_review_gate");
    add(planner.id, executor.id, "exact_twin_execution");
  }
  nodes.sort((a, b) => compareIds(a.id, b.id));
  edges.sort((a, b) => compareIds(a.from, b.from) || compareIds(a.to, b.to) || EDGE_KINDS.indexOf(a.kind) - EDGE_KINDS.indexOf(b.kind));
  return { format: "twinlock-graph/1", suite_id: suite.config.suite_id ?? null, nodes, edges };
}

/** Order IDs by prefix, then number (MD-2 before MD-10), so listings read naturally. */
export function compareIds(a: string, b: string): number {
  const [pa = "", na = ""] = a.split("-");
  const [pb = "", nb = ""] = b.split("-");
  if (pa !== pb) return pa < pb ? -1 : 1;
  const diff = Number(na) - Number(nb);
  if (diff !== 0) return diff;
  return a < b ? -1 : a > b ? 1 : 0;
}
