import { ConflictError, RefusalError } from "../errors/errors.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { endSessionsOfRun, sessionRunFile } from "../home/write-session-binding.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import type { StopResolution } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import { sealReceipt } from "../trust/seal-receipt.js";
import { personForKey } from "../trust/sign-as-reviewer.js";
import type { ReceiptKey } from "../trust/sign-receipt.js";

/** Record a hard `!STOP:{reason}` on the run, or on one workflow; anyone may raise one, and admission refuses while it is open. */
export async function raiseStop(input: {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  reason: string;
  workflow?: string;
  note?: string;
  actor: string;
  now?: () => Date;
}): Promise<LoadedRun> {
  // The sessions end first, in the gate home: a stop waits its turn in the run's queue behind writes asked for
  // earlier, and the agent's session must not stay alive for as long as it waits.
  const runFile = input.store.runFolder(input.run) === undefined ? undefined : boundRunFile(input.run);
  const ended = runFile === undefined ? [] : await endSessionsOfRun(input.store.home, runFile, input.workflow);
  const { run } = await input.store
    .update(
      input.run,
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
    )
    .catch((error: unknown) => {
      if (ended.length === 0 || !(error instanceof ConflictError)) throw error;
      throw new ConflictError(
        `the agent session of ${ended.join(", ")} is ended (every hooked tool call is now denied), but the stop is not recorded: ${error.message}`,
        { cause: error },
      );
    });
  return run;
}

/**
 * The run file's real path, as a session binding names it; undefined when it
 * cannot be worked out (no such folder, a name too long): then no session can
 * be bound to it, and the stop's own write reports the problem.
 */
function boundRunFile(run: string): string | undefined {
  try {
    return sessionRunFile(run);
  } catch {
    return undefined;
  }
}

/**
 * Lift every unresolved `!STOP:{reason}` (of one workflow, if given), with a
 * note saying how. On signing suites only a key with the `stop` right may
 * lift a stop, and admission re-judges the signed resolution under the pin.
 */
export async function resolveStop(input: {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  reason: string;
  workflow?: string;
  note: string;
  actor?: string;
  /** The person's key file, or a passkey signer (the gate server). */
  key?: ReceiptKey;
  now?: () => Date;
}): Promise<{ run: LoadedRun; resolved: number; receipt: StopResolution }> {
  const before = await input.store.read(input.run);
  // Lifting a stop is judged by the pinned policy alone; no prompt is read.
  const pinned = loadPinnedPolicy(input.store.home, before.state.suite);
  const person = personForKey(input.key, input.actor, pinned.config, "--actor");
  const { run, result } = await input.store.update(
    input.run,
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
      const unsigned: StopResolution = {
        kind: "stop_resolution",
        run_id: current.state.run_id,
        reason: input.reason,
        workflow: input.workflow ?? null,
        by: person,
        resolution: input.note,
        at: (input.now?.() ?? new Date()).toISOString(),
      };
      const receipt = sealReceipt(unsigned, { key: input.key, person, right: "stop", config: pinned.config, what: "lift a stop on" });
      return { events: [{ type: "stop_resolved", actor: person, data: { receipt } }], result: { count: open.length, receipt } };
    },
    { now: input.now },
  );
  return { run, resolved: result.count, receipt: result.receipt };
}
