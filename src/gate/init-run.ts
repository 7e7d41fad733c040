import { randomBytes } from "node:crypto";
import path from "node:path";
import { RefusalError, UsageError } from "../errors/errors.js";
import type { Settings } from "../run/run-schema.js";
import { createRunFile, type LoadedRun } from "../store/run-store.js";
import { loadSuite, type Suite } from "../suite/load-suite.js";
import type { Mode } from "../suite/prompt.js";
import { pairDigest } from "../twin/pair-digest.js";
import { resolveExactTwin } from "../twin/resolve-exact-twin.js";

/** Modes in which an executor acts; AUDIT_ONLY and PLAN_ONLY never execute, so a run cannot be made for them. */
export const EXECUTING_MODES: readonly Mode[] = ["DRAFT_ONLY", "APPLY_SAFE", "APPLY_APPROVED", "VERIFY_ONLY"];

export interface InitRunInput {
  runFile: string;
  suiteRoot: string;
  planners: string[];
  mode?: Mode;
  environment?: string;
  actions?: "all" | string[];
  budget?: number | null;
  actor: string;
  now?: Date;
}

/**
 * Create a run file for one or more pairs (SPEC §5). Each planner must
 * resolve to its exact twin in the suite as it is now; the mode must be one
 * the executor allows. Records the suite root and each pair's digest.
 */
export async function initRun(input: InitRunInput): Promise<LoadedRun> {
  const suite: Suite = loadSuite(input.suiteRoot);
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
    if (!resolved.ok) throw new RefusalError(`${planner} has no exact twin, so no run can be made for it: ${resolved.reasons.join("; ")}`);
    const { executor } = resolved.twin;
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
  return createRunFile(
    input.runFile,
    [
      {
        type: "run_created",
        actor: input.actor,
        data: { run_id: runId, suite: { root: path.resolve(suite.root), suite_id: suite.config.suite_id ?? null }, settings, workflows },
      },
    ],
    input.now ?? new Date(),
  );
}
