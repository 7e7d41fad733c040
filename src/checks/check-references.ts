import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Suite } from "../suite/load-suite.js";
import { type Prompt, positionOf } from "../suite/prompt.js";
import { isPairMember } from "../twin/check-pair-member.js";

/**
 * Every `requires` and `related_prompts` ID exists and is not the prompt
 * itself; `requires` cycles are warnings, but an error when a paired prompt
 * is on the cycle (SPEC §3).
 */
export function checkReferences(suite: Suite): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const prompt of suite.prompts) {
    checkIds(suite, prompt, "requires", prompt.requires, out);
    checkIds(suite, prompt, "related_prompts", prompt.relatedPrompts, out);
  }
  out.push(...findRequireCycles(suite));
  return out;
}

function checkIds(suite: Suite, prompt: Prompt, key: "requires" | "related_prompts", ids: readonly string[], out: Diagnostic[]): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as string;
    if (id !== prompt.id && suite.byId.has(id)) continue;
    // Positions are worked out only for a problem.
    const pos = prompt.positions.get(`${key}[${i}]`) ?? positionOf(prompt, key);
    const base = { severity: "error" as const, file: prompt.file, line: pos.line, col: pos.col, promptId: prompt.id, field: key };
    if (id === prompt.id) out.push({ ...base, code: "REF_SELF", message: `${prompt.id}: \`${key}\` names the prompt itself; remove it` });
    else out.push({ ...base, code: "REF_UNKNOWN", message: `${prompt.id}: \`${key}\` names ${id}, which is not a prompt of the suite` });
  }
}

/** Tarjan's strongly connected components over `requires`, iterative so 10,000-prompt chains cannot overflow the stack. */
function findRequireCycles(suite: Suite): Diagnostic[] {
  const ids = [...suite.byId.keys()].sort();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  // The next edge out of a frame: a `requires` ID of the suite other than the prompt's own, skipping the rest in place.
  const nextEdge = (frame: { id: string; next: number }) => {
    const targets = suite.byId.get(frame.id)?.requires ?? [];
    while (frame.next < targets.length) {
      const t = targets[frame.next++] as string;
      if (t !== frame.id && suite.byId.has(t)) return t;
    }
    return undefined;
  };

  for (const start of ids) {
    if (index.has(start)) continue;
    const work: Array<{ id: string; next: number }> = [{ id: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { id: string; next: number };
      const w = nextEdge(frame);
      if (w !== undefined) {
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ id: w, next: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.id, Math.min(low.get(frame.id) as number, index.get(w) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id) as number, low.get(frame.id) as number));
      if (low.get(frame.id) === index.get(frame.id)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.id);
        if (component.length > 1) components.push(component.sort());
      }
    }
  }

  const out: Diagnostic[] = [];
  for (const component of components) {
    const paired = component.filter((id) => {
      const p = suite.byId.get(id);
      return p !== undefined && isPairMember(p);
    });
    const first = suite.byId.get(component[0] as string);
    if (!first) continue;
    const pos = positionOf(first, "requires");
    const list = component.join(" → ");
    out.push({
      code: paired.length > 0 ? "REF_CYCLE_PAIRED" : "REF_CYCLE",
      severity: paired.length > 0 ? "error" : "warning",
      file: first.file,
      line: pos.line,
      col: pos.col,
      promptId: first.id,
      field: "requires",
      message:
        paired.length > 0
          ? `\`requires\` cycle through paired prompt${paired.length > 1 ? "s" : ""} ${paired.join(", ")} (${list}); a pair must not depend on itself — break the cycle`
          : `\`requires\` cycle among ${list}; allowed for control contracts that cite each other`,
    });
  }
  return out;
}
