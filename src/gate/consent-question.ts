import { cleanText } from "../input/clean-text.js";
import type { Settings, Workflow } from "../run/run-schema.js";

/** The consent question, naming the exact executor's ID and title and nothing else. */
export function consentQuestion(
  wf: Pick<Workflow, "planner" | "executor" | "executor_title" | "revision"> & { handoff: { hash: string } | null },
  settings?: Settings,
): string {
  const plan = wf.handoff
    ? `the approved frozen plan of ${wf.planner}, revision ${wf.revision} (${wf.handoff.hash})`
    : `${wf.planner}'s plan once it is frozen and approved`;
  // Every value is shown clean: a run file's settings are agent-written, and the question must read as what is signed.
  const limits = settings
    ? ` It would act in mode ${settings.mode}, environment ${cleanText(settings.environment)}, on ${settings.actions === "all" ? "all the plan's actions" : `actions ${settings.actions.map(cleanText).join(", ")}`}${settings.budget === null ? "" : `, at most ${settings.budget} per admission`}.`
    : "";
  return `May ${wf.executor} (${cleanText(wf.executor_title)}) now act on ${plan}?${limits}`;
}

/**
 * The consent question in one short line, for a summary that expands to the
 * whole of it (consentQuestion): the executor's ID and title, the planner and
 * the revision, without the hash and the limits.
 */
export function consentQuestionLine(wf: Pick<Workflow, "planner" | "executor" | "executor_title" | "revision">): string {
  return `May ${wf.executor} (${cleanText(wf.executor_title)}) act on ${wf.planner}'s plan, revision ${wf.revision}?`;
}
