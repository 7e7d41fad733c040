import { STATES, type State } from "../run/transition-table.js";
import type { RunListFilters, RunSummaryView } from "../web/view-model.js";
import { HttpProblem } from "./http-problem.js";

/** The longest `suite=` a filter takes: a suite ID is far shorter, and a longer value is not looked for. */
const MAX_SUITE_FILTER = 200;

/**
 * The run list's filters from its query (`?state=…&suite=…`, as its plain
 * GET form sends them): empty or absent means any. A state that is not one
 * of the workflow states, or an over-long suite, is refused with a 400
 * naming what is accepted; the value is checked by length and set
 * membership only, never by a pattern.
 */
export function parseRunListFilters(query: { state?: string; suite?: string }): RunListFilters {
  const state = query.state ?? "";
  const suite = query.suite ?? "";
  if (state !== "" && !(STATES as readonly string[]).includes(state))
    throw new HttpProblem(
      400,
      "BAD_INPUT",
      `state=${JSON.stringify(state.slice(0, 40))} is not a workflow state; filter by one of ${STATES.join(", ")}, or leave it empty for any`,
    );
  if (suite.length > MAX_SUITE_FILTER)
    throw new HttpProblem(400, "BAD_INPUT", `suite= is ${suite.length} characters, over the ${MAX_SUITE_FILTER} a suite ID may have`);
  return { state: state === "" ? null : (state as State), suite: suite === "" ? null : suite };
}

/** The runs the filters keep: of the suite named, with at least one pair in the state named; no filter keeps every run. */
export function filterRuns(runs: readonly RunSummaryView[], filters: RunListFilters): RunSummaryView[] {
  return runs.filter(
    (r) =>
      (filters.suite === null || r.suiteId === filters.suite) && (filters.state === null || r.pairs.some((p) => p.state === filters.state)),
  );
}
