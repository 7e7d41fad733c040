import type { AdmissionCheckModule } from "../admission-facts.js";
import { liftsNotNamingTheirStop, openStops } from "../stops-holding-back.js";

/** Check 8: no unresolved `!STOP` on the run or the workflow; a lift not trusted, or not naming its stop, still counts. */
export const noOpenStop: AdmissionCheckModule = {
  id: "8",
  name: "no unresolved !STOP on the run or the workflow",
  reads: ["state", "workflow", "untrustedStopLifts"],
  judge(f) {
    const planner = f.workflow?.planner;
    const stops = [
      ...openStops(f.state, planner).map((s) => `!STOP:${s.reason}${s.workflow ? ` (${s.workflow})` : " (run)"}`),
      ...liftsNotNamingTheirStop(f.state, planner).map(
        (s) => `!STOP:${s.reason} ${s.seq}${s.workflow ? ` (${s.workflow})` : " (run)"} (lifted by a receipt that does not name it)`,
      ),
      ...f.untrustedStopLifts.map((s) => `${s} (lifted without a trusted signature)`),
    ];
    return { ok: stops.length === 0, detail: stops.length ? stops.join(", ") : "none" };
  },
  rejudge: ({ state, planner, distrustStopLift }) => {
    const mine = state.stops.filter((s) => s.workflow === null || s.workflow === planner);
    return [
      ...mine.filter((s) => s.resolved_at === null).map((s) => `!STOP:${s.reason} was unresolved at the admission`),
      ...mine
        .filter((s) => s.resolved_at !== null)
        .flatMap((s) => {
          if (!s.resolution_receipt) return [`!STOP:${s.reason} was lifted without a resolution receipt`];
          const why = distrustStopLift(s.resolution_receipt);
          return why === undefined ? [] : [`!STOP:${s.reason} was lifted without a trusted signature (${why})`];
        }),
      ...liftsNotNamingTheirStop(state, planner).map(
        (s) => `!STOP:${s.reason} (stop ${s.seq}) was lifted by a receipt that does not name it`,
      ),
    ];
  },
};
