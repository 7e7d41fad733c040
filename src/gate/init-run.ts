import { randomBytes } from "node:crypto";
import { RefusalError, UsageError } from "../errors/errors.js";
import { loadPinnedSuite, pinForFolder, requirePinnedPair } from "../home/suite-pins.js";
import { findHiddenInName } from "../input/clean-text.js";
import type { Settings } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import type { Suite } from "../suite/load-suite.js";
import type { Mode } from "../suite/prompt.js";
import { pairDigest } from "../twin/pair-digest.js";
import { resolveExactTwin } from "../twin/resolve-exact-twin.js";
import { requireActionIds } from "./action-scope.js";

/** Modes in which an executor acts; AUDIT_ONLY and PLAN_ONLY never execute, so a run cannot be made for them. */
export const EXECUTING_MODES: readonly Mode[] = ["DRAFT_ONLY", "APPLY_SAFE", "APPLY_APPROVED", "VERIFY_ONLY"];

export interface InitRunInput {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  suiteRoot: string;
  planners: string[];
  mode?: Mode;
  environment?: string;
  actions?: "all" | string[];
  budget?: number | null;
  /** The change the run is for (`OWNER/REPO#NUMBER` or `OWNER/REPO@BRANCH`): CI refuses the run for any other. */
  change?: string;
  actor: string;
  now?: Date;
}

/**
 * Create a run file for one or more pairs (SPEC §5). Each planner must
 * resolve to its exact twin in the suite as it is now; the mode must be one
 * the executor allows. Records the suite root and each pair's digest.
 */
export async function initRun(input: InitRunInput): Promise<LoadedRun> {
  // The settings are printed in the consent question a person answers: nothing in them may hide text on a terminal.
  if (input.actions !== undefined && input.actions !== "all") requireActionIds(input.actions);
  if (input.environment !== undefined && findHiddenInName(input.environment))
    throw new UsageError("--environment contains a control, invisible or direction character; give a plain name such as staging");
  // A team store's pins are the database's: the home's copy is brought up to date before it is read.
  await input.store.home.shared?.refresh();
  const pin = pinForFolder(input.store.home, input.suiteRoot);
  const pinned = loadPinnedSuite(input.store.home, { root: pin.root, suite_id: pin.suite_id }, input.planners);
  const suite: Suite = pinned.suite;
  const mode = input.mode ?? "DRAFT_ONLY";
  if (!EXECUTING_MODES.includes(mode)) {
    throw new UsageError(`--mode ${mode} never executes, so it needs no run; use one of ${EXECUTING_MODES.join(", ")}`);
  }
  if (input.planners.length === 0) throw new UsageError("init-run needs at least one --planner ID");
  const seen = new Set<string>();
  const workflows = input.planners.map((planner) => {
    if (seen.has(planner)) throw new UsageError(`--planner ${planner} is given twice`);
    seen.add(planner);
    const resolved = resolveExactTwin(suite, planner);
    if (!resolved.ok) {
      // An executor named by mistake: point at its planner.
      const asExecutor = suite.byId.get(planner);
      const hint =
        asExecutor?.role === "executive" && asExecutor.pairedPromptId
          ? `; ${planner} is an executor — its planner is ${asExecutor.pairedPromptId}: init-run --planner ${asExecutor.pairedPromptId}`
          : "";
      throw new RefusalError(`${planner} has no exact twin, so no run can be made for it: ${resolved.reasons.join("; ")}${hint}`);
    }
    const { executor } = resolved.twin;
    requirePinnedPair(pinned, planner, executor.id);
    if (executor.allowedModes.length > 0 && !executor.allowedModes.includes(mode)) {
      throw new RefusalError(
        `${executor.id} (${executor.title ?? "untitled"}) does not allow mode ${mode}; its allowed_modes are ${executor.allowedModes.join(", ")}`,
      );
    }
    return {
      planner,
      executor: executor.id,
      executor_title: executor.title ?? executor.id,
      pair_digest: pairDigest(resolved.twin.planner, executor),
    };
  });
  const settings: Settings = {
    mode,
    environment: input.environment ?? "default",
    actions: input.actions ?? "all",
    budget: input.budget ?? null,
  };
  const runId = `run_${randomBytes(8).toString("hex")}`;
  return input.store.create(
    input.run,
    [
      {
        type: "run_created",
        actor: input.actor,
        data: {
          run_id: runId,
          home_id: input.store.home.id,
          suite: { root: pin.root, suite_id: pin.suite_id },
          settings,
          ...(input.change === undefined ? {} : { change: input.change }),
          workflows,
        },
      },
    ],
    input.now ?? new Date(),
  );
}
