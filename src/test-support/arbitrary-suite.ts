import fc from "fast-check";
import {
  executorBody,
  executorFrontmatter,
  type Frontmatter,
  plannerBody,
  plannerFrontmatter,
  renderPrompt,
  unpairedBody,
  unpairedFrontmatter,
} from "./prompt-builder.js";

/** Roles a prompt outside any pair may have (an unpaired executive is the source's MD-26 case). */
export const UNPAIRED_ROLES = ["control", "operational", "gate", "executive"] as const;

/** A generated suite, kept as a model so one field can be mutated before rendering. */
export interface SuiteModel {
  pairs: Array<{ planner: string; executor: string }>;
  unpaired: Array<{ id: string; role: (typeof UNPAIRED_ROLES)[number] }>;
  /** `requires` of every prompt, by ID; forms a DAG (and each executor requires its planner). */
  requires: Map<string, string[]>;
  related: Map<string, string[]>;
  /** Folder of every prompt, by ID. */
  folder: Map<string, string>;
}

const idArb = fc.tuple(fc.stringMatching(/^[A-Z][A-Z0-9]{0,3}$/), fc.integer({ min: 0, max: 9999 })).map(([prefix, n]) => `${prefix}-${n}`);

/**
 * A random valid suite: 1..maxPairs canonical pairs, 0..4 unpaired prompts
 * of any role, random IDs, and random `requires` edges that always point to
 * a prompt ranked lower, so they form a DAG.
 */
export function suiteModelArb(maxPairs = 5): fc.Arbitrary<SuiteModel> {
  return fc
    .record({
      pairCount: fc.integer({ min: 1, max: maxPairs }),
      unpairedRoles: fc.array(fc.constantFrom(...UNPAIRED_ROLES), { maxLength: 4 }),
    })
    .chain(({ pairCount, unpairedRoles }) => {
      const total = pairCount * 2 + unpairedRoles.length;
      return fc.record({
        pairCount: fc.constant(pairCount),
        unpairedRoles: fc.constant(unpairedRoles),
        ids: fc.uniqueArray(idArb, { minLength: total, maxLength: total }),
        ranks: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: total, maxLength: total }),
        edges: fc.array(fc.tuple(fc.nat(total - 1), fc.nat(total - 1)), { maxLength: total * 2 }),
        relatedEdges: fc.array(fc.tuple(fc.nat(total - 1), fc.nat(total - 1)), { maxLength: total }),
        folders: fc.array(fc.constantFrom("a", "b/c", "d"), { minLength: total, maxLength: total }),
      });
    })
    .map(({ pairCount, unpairedRoles, ids, ranks, edges, relatedEdges, folders }) => {
      const id = (i: number) => ids[i] as string;
      // Rank order with index as tie-break; a planner must rank below its executor.
      const rank = ranks.map((r, i) => r * 10_000 + i);
      for (let p = 0; p < pairCount; p++) {
        const a = 2 * p;
        const b = 2 * p + 1;
        if ((rank[a] as number) > (rank[b] as number)) [rank[a], rank[b]] = [rank[b] as number, rank[a] as number];
      }
      const requires = new Map<string, string[]>(ids.map((x) => [x, []]));
      const related = new Map<string, string[]>(ids.map((x) => [x, []]));
      const add = (map: Map<string, string[]>, from: string, to: string) => {
        const list = map.get(from) as string[];
        if (from !== to && !list.includes(to)) list.push(to);
      };
      for (let p = 0; p < pairCount; p++) add(requires, id(2 * p + 1), id(2 * p));
      for (const [a, b] of edges) if ((rank[a] as number) > (rank[b] as number)) add(requires, id(a), id(b));
      for (const [a, b] of relatedEdges) add(related, id(a), id(b));
      return {
        pairs: Array.from({ length: pairCount }, (_, p) => ({ planner: id(2 * p), executor: id(2 * p + 1) })),
        unpaired: unpairedRoles.map((role, j) => ({ id: id(pairCount * 2 + j), role })),
        requires,
        related,
        folder: new Map(ids.map((x, i) => [x, folders[i] as string])),
      };
    });
}

/** The frontmatter of every prompt of a model, by ID, before rendering. */
export function modelFrontmatter(model: SuiteModel): Map<string, Frontmatter> {
  const out = new Map<string, Frontmatter>();
  const refs = (id: string) => ({ requires: model.requires.get(id) ?? [], related_prompts: model.related.get(id) ?? [] });
  for (const { planner, executor } of model.pairs) {
    out.set(planner, plannerFrontmatter(planner, executor, refs(planner)));
    out.set(executor, executorFrontmatter(executor, planner, refs(executor)));
  }
  for (const { id, role } of model.unpaired) out.set(id, unpairedFrontmatter(id, role, refs(id)));
  return out;
}

/** Render a model (with possibly mutated frontmatter) to `{ path: text }`. */
export function renderModel(model: SuiteModel, frontmatter = modelFrontmatter(model)): Record<string, string> {
  const files: Record<string, string> = {};
  const path = (id: string) => `${model.folder.get(id)}/${id.toLowerCase()}.md`;
  for (const { planner, executor } of model.pairs) {
    files[path(planner)] = renderPrompt(frontmatter.get(planner) as Frontmatter, plannerBody(executor));
    files[path(executor)] = renderPrompt(frontmatter.get(executor) as Frontmatter, executorBody(planner));
  }
  for (const { id } of model.unpaired) files[path(id)] = renderPrompt(frontmatter.get(id) as Frontmatter, unpairedBody());
  return files;
}
