import { ActionPlanSchema } from "../handoff/handoff-records.js";
import type { RunEvent, Workflow } from "./run-schema.js";

/** The frozen records of a workflow's current revision, from its freeze event. */
export function frozenRecords(events: readonly RunEvent[], wf: Workflow, revision = wf.revision): Record<string, unknown> | undefined {
  const entry = wf.history.find((h) => h.revision === revision);
  const event = entry ? events[entry.seq - 1] : undefined;
  return event?.type === "handoff_frozen" ? (event.data.records as Record<string, unknown>) : undefined;
}

/** The +ACTION IDs of a workflow's frozen plan; none when the records do not hold a valid plan (an unverified file). */
export function planActionIds(events: readonly RunEvent[], wf: Workflow): string[] {
  const plan = ActionPlanSchema.safeParse((frozenRecords(events, wf) as { actions?: unknown } | undefined)?.actions);
  return plan.success ? plan.data.actions.map((a) => a.id) : [];
}
