import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { STATES, type State, TRANSITIONS, type Transition } from "../run/transition-table.js";

const REQUIRED_STATES: readonly State[] = STATES;

/**
 * Search the runtime's transition table (SPEC §3 "state machine"): every
 * required state exists and every row uses known states; the review loop
 * (review → changes requested → re-freeze → review) is possible; `executing`
 * is reachable; and no path reaches `executing` without passing
 * `execution_consent_pending` after the latest freeze. A breadth-first search
 * over (state, consented-since-freeze) finds the shortest offending path.
 */
export function checkStateMachine(table: readonly Transition[] = TRANSITIONS, states: readonly string[] = STATES): Diagnostic[] {
  const out: Diagnostic[] = [];
  const problem = (message: string) =>
    out.push({ code: "STATE_MACHINE", severity: "error", file: "(runtime transition table)", line: 1, col: 1, message });
  for (const s of REQUIRED_STATES) if (!states.includes(s)) problem(`required state ${s} is missing`);
  for (const t of table) {
    if (!states.includes(t.from) || !states.includes(t.to)) problem(`row ${t.from} --${t.event}--> ${t.to} uses an unknown state`);
  }

  const path = (from: State, to: State, avoid?: (t: Transition) => boolean) => search(table, from, (s) => s === to, avoid);
  const loop =
    path("plan_review_pending", "plan_revision_pending") &&
    path("plan_revision_pending", "handoff_frozen") &&
    path("handoff_frozen", "plan_review_pending");
  if (!loop) problem("the review loop plan_review_pending → plan_revision_pending → handoff_frozen → plan_review_pending is not possible");
  if (!path("investigating", "executing")) problem("executing cannot be reached from investigating");

  // State = (workflow state, whether consent was passed since the latest freeze).
  type Node = { state: State; consented: boolean; via: string[] };
  const seen = new Set<string>();
  const queue: Node[] = [{ state: "investigating", consented: false, via: ["investigating"] }];
  while (queue.length > 0) {
    const node = queue.shift() as Node;
    const key = `${node.state}|${node.consented}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (node.state === "executing" && !node.consented) {
      problem(`executing is reachable without execution consent after the latest freeze: ${node.via.join(" → ")}`);
      break;
    }
    for (const t of table) {
      if (t.from !== node.state) continue;
      const consented =
        t.event === "handoff_frozen" ? false : node.consented || (t.from === "execution_consent_pending" && t.event === "consent_granted");
      queue.push({ state: t.to, consented, via: [...node.via, `(${t.event}) ${t.to}`] });
    }
  }
  return out;
}

function search(table: readonly Transition[], from: State, goal: (s: State) => boolean, avoid?: (t: Transition) => boolean): boolean {
  const seen = new Set<State>([from]);
  const queue = [from];
  while (queue.length > 0) {
    const s = queue.shift() as State;
    for (const t of table) {
      if (t.from !== s || avoid?.(t)) continue;
      if (goal(t.to)) return true;
      if (!seen.has(t.to)) {
        seen.add(t.to);
        queue.push(t.to);
      }
    }
  }
  return false;
}
