import { RefusalError } from "../errors/errors.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import { type LoadedRun, updateRunFile } from "../store/run-store.js";

/** Record a hard `!STOP:{reason}` on the run, or on one workflow; admission refuses while it is unresolved. */
export async function raiseStop(input: {
  runFile: string;
  reason: string;
  workflow?: string;
  note?: string;
  actor: string;
  now?: () => Date;
}): Promise<LoadedRun> {
  const { run } = await updateRunFile(
    input.runFile,
    (current) => {
      if (input.workflow !== undefined) requireWorkflow(current.state.workflows, input.workflow);
      return {
        events: [
          {
            type: "stop_raised",
            actor: input.actor,
            data: { reason: input.reason, workflow: input.workflow ?? null, note: input.note ?? null },
          },
        ],
        result: undefined,
      };
    },
    { now: input.now },
  );
  return run;
}

/** Resolve every unresolved `!STOP:{reason}` (of one workflow, if given), with a note saying how. */
export async function resolveStop(input: {
  runFile: string;
  reason: string;
  workflow?: string;
  note: string;
  actor: string;
  now?: () => Date;
}): Promise<{ run: LoadedRun; resolved: number }> {
  const { run, result } = await updateRunFile(
    input.runFile,
    (current) => {
      const open = current.state.stops.filter(
        (s) => s.resolved_at === null && s.reason === input.reason && (input.workflow === undefined || s.workflow === input.workflow),
      );
      if (open.length === 0) {
        const listed = current.state.stops
          .filter((s) => s.resolved_at === null)
          .map((s) => `!STOP:${s.reason}${s.workflow ? ` (${s.workflow})` : ""}`);
        throw new RefusalError(
          `no unresolved !STOP:${input.reason}${input.workflow ? ` on ${input.workflow}` : ""}; unresolved stops: ${listed.join(", ") || "none"}`,
        );
      }
      return {
        events: [
          {
            type: "stop_resolved",
            actor: input.actor,
            data: { reason: input.reason, workflow: input.workflow ?? null, resolution: input.note },
          },
        ],
        result: open.length,
      };
    },
    { now: input.now },
  );
  return { run, resolved: result };
}
