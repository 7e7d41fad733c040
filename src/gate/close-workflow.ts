import { UsageError } from "../errors/errors.js";
import { requireTransition, requireWorkflow } from "../run/refuse-transition.js";
import type { Workflow } from "../run/run-schema.js";
import { isFinal } from "../run/transition-table.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";

export const CLOSE_RESULTS = ["verified", "failed", "rolled_back", "abandoned"] as const;
export type CloseResult = (typeof CLOSE_RESULTS)[number];

/**
 * Close a workflow. After execution: `verified`, `failed` or `rolled_back`,
 * with residuals. Before execution: `abandoned` (closed) or `failed`, both
 * with a residual record saying what was left undone.
 */
export async function closeWorkflow(input: {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  planner: string;
  result: CloseResult;
  residual?: string;
  actor: string;
  now?: () => Date;
}): Promise<{ run: LoadedRun; workflow: Workflow }> {
  const { run } = await input.store.update(
    input.run,
    (current) => {
      const wf = requireWorkflow(current.state.workflows, input.planner);
      // A closed or failed workflow: the standard refusal, naming the state and that nothing follows.
      if (isFinal(wf.state)) requireTransition(input.run, wf, "closed", "close the workflow");
      const executing = wf.state === "executing";
      if (!executing && input.result !== "failed" && input.result !== "abandoned") {
        throw new UsageError(
          `${wf.planner} is ${wf.state}, not executing: close it with --result abandoned or failed and a --residual record`,
        );
      }
      if (executing && input.result === "abandoned")
        throw new UsageError("an executing workflow closes as verified, failed or rolled_back");
      if (!executing && !input.residual?.trim())
        throw new UsageError("closing before execution needs --residual TEXT recording what was left undone");
      if (!executing && input.result === "failed") {
        requireTransition(input.run, wf, "failed", "mark the workflow failed");
        return {
          events: [{ type: "failed", actor: input.actor, data: { planner: wf.planner, residual: input.residual as string } }],
          result: undefined,
        };
      }
      requireTransition(input.run, wf, "closed", "close the workflow");
      return {
        events: [
          { type: "closed", actor: input.actor, data: { planner: wf.planner, outcome: input.result, residual: input.residual ?? null } },
        ],
        result: undefined,
      };
    },
    { now: input.now },
  );
  return { run, workflow: run.state.workflows[input.planner] as Workflow };
}
