import type { Settings, Workflow } from "../run/run-schema.js";

/** The consent question, naming the exact executor's ID and title and nothing else. */
export function consentQuestion(
  wf: Pick<Workflow, "planner" | "executor" | "executor_title" | "revision"> & { handoff: { hash: string } | null },
  settings?: Settings,
): string {
  const plan = wf.handoff
    ? `the approved frozen plan of ${wf.planner}, revision ${wf.revision} (${wf.handoff.hash})`
    : `${wf.planner}'s plan once it is frozen and approved`;
  const limits = settings
    ? ` It would act in mode ${settings.mode}, environment ${settings.environment}, on ${settings.actions === "all" ? "all the plan's actions" : `actions ${settings.actions.join(", ")}`}${settings.budget === null ? "" : `, at most ${settings.budget} per admission`}.`
    : "";
  return `May ${wf.executor} (${wf.executor_title}) now act on ${plan}?${limits}`;
}
