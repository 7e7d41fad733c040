import type { RunState } from "../run-schema.js";

/** The stops not yet resolved that hold back the pair of `planner`: those on the whole run and those on that pair. */
export function openStops(state: RunState, planner: string | undefined): RunState["stops"] {
  return state.stops.filter((s) => s.resolved_at === null && (s.workflow === null || s.workflow === planner));
}

/**
 * The lifted stops holding back the pair of `planner` whose lift receipt does
 * not name them (by their number, with their reason and, when it names one,
 * their workflow). Replay lifts only the stops a receipt names; admission
 * checks it again on the state it is given.
 */
export function liftsNotNamingTheirStop(state: RunState, planner: string | undefined): RunState["stops"] {
  return state.stops.filter((s) => {
    if (s.resolved_at === null || (s.workflow !== null && s.workflow !== planner)) return false;
    const r = s.resolution_receipt;
    return (
      r === null ||
      r.run_id !== state.run_id ||
      r.reason !== s.reason ||
      (r.workflow !== null && r.workflow !== s.workflow) ||
      !namesSeq(r.stops, s.seq)
    );
  });
}

/** Whether an ascending list of stop numbers (as replay requires a lift's) holds `seq`: a binary search. */
function namesSeq(stops: readonly number[], seq: number): boolean {
  let lo = 0;
  let hi = stops.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = stops[mid] as number;
    if (v === seq) return true;
    if (v < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
