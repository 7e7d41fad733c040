import { RefusalError } from "../errors/errors.js";
import { describeNextStep, nextStepData } from "./next-step.js";
import type { Workflow } from "./run-schema.js";
import { findTransition, type Transition, type TransitionEvent } from "./transition-table.js";

/**
 * Throw a refusal unless `event` is legal for the workflow's state, naming
 * the current state and the one legal next step.
 */
export function requireTransition(runPath: string, wf: Workflow, event: TransitionEvent, what: string, when?: Transition["when"]): void {
  if (findTransition(wf.state, event, when)) return;
  const next = describeNextStep(wf.state, { run: runPath, planner: wf.planner, executor: wf.executor, hash: wf.handoff?.hash });
  throw new RefusalError(`cannot ${what}: ${wf.planner} is in state ${wf.state}; ${legalNextStep(next)}`, {
    code: "TRANSITION_REFUSED",
    state: wf.state,
    next_action: next.action,
    next_command: next.command,
    // The same step as data, for a front end that offers it rather than prints it.
    next_step: nextStepData(next),
  });
}

/** "the legal next step is to …", or, from a final state, that there is none. */
export function legalNextStep(next: { action: string; command: string }): string {
  // Final states have no step; their action reads "none: why", which must not become "to none".
  if (next.action.startsWith("none: ")) return `there is no legal next step: ${next.action.slice("none: ".length)}`;
  return `the legal next step is to ${next.action}${next.command ? ` (${next.command})` : ""}`;
}

/** The workflow of `planner` in this run, or a refusal listing the run's planners. */
export function requireWorkflow<W extends { planner: string }>(workflows: Record<string, W>, planner: string): W {
  // Only the run's own record: a planner named `__proto__` or `toString` is no built-in member.
  const wf = Object.hasOwn(workflows, planner) ? workflows[planner] : undefined;
  if (wf) return wf;
  const asExecutor = Object.values(workflows).find((w) => (w as unknown as { executor?: string }).executor === planner) as
    | (W & { executor: string })
    | undefined;
  if (asExecutor)
    throw new RefusalError(
      `${planner} is the executor of ${asExecutor.planner} in this run; this command takes the planner: pass ${asExecutor.planner}`,
      { executor_of: asExecutor.planner },
      { code: "UNKNOWN_PAIR" },
    );
  throw new RefusalError(
    `${planner} is not a planner of this run (its planners: ${Object.keys(workflows).join(", ")}); pass one of those, or create a run for ${planner}`,
    { planners: Object.keys(workflows) },
    { code: "UNKNOWN_PAIR" },
  );
}
