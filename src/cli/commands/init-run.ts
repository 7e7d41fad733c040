import { UsageError } from "../../errors/errors.js";
import { EXECUTING_MODES, initRun } from "../../gate/init-run.js";
import { pairStatusFromRun } from "../../gate/pair-status.js";
import { resolveActor } from "../../gate/resolve-actor.js";
import { parseActionIds, parseChangeRef, parseChoice, parseCount, parseName, parsePromptId } from "../../input/parse-input.js";
import { findSuiteRoot } from "../../suite/find-suite-root.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

export interface InitRunOptions extends CommonOptions {
  suite?: string;
  planner: string[];
  mode?: string;
  environment?: string;
  actions?: string;
  budget?: string;
  forChange?: string;
  actor?: string;
}

/** `twinlock init-run RUN --planner ID …`: create the run file. */
export async function runInitRun(runFile: string, o: InitRunOptions): Promise<CommandResult> {
  const planners = o.planner.map((p) => parsePromptId(p, "--planner"));
  const actions = o.actions === undefined || o.actions === "all" ? "all" : parseActionIds(o.actions, "--actions");
  if (o.environment !== undefined && o.environment.trim() === "")
    throw new UsageError("--environment must not be empty; name where the executor may act, e.g. staging");
  if (o.budget !== undefined && parseCount(o.budget, "--budget") === 0)
    throw new UsageError("--budget 0 would admit nothing; give at least 1, or leave it out for no limit");
  const mode = o.mode === undefined ? undefined : parseChoice(o.mode, EXECUTING_MODES, "--mode (a mode a run executes in)");
  const change = o.forChange === undefined ? undefined : parseChangeRef(o.forChange, "--for-change");
  const store = storeOption(o);
  const run = await initRun({
    run: runFile,
    store,
    suiteRoot: findSuiteRoot({ suite: o.suite }),
    planners,
    mode,
    environment: o.environment === undefined ? undefined : parseName(o.environment, "--environment"),
    actions,
    budget: o.budget === undefined ? null : parseCount(o.budget, "--budget"),
    change,
    actor: resolveActor(o.actor),
  });
  const s = run.state;
  const pairs = Object.values(s.workflows).map((w) => `${w.planner} → ${w.executor} (${w.executor_title})`);
  const text = [
    `created ${runFile} (${s.run_id})`,
    ...pairs.map((p) => `  pair ${p}: investigating`),
    ...(s.change ? [`  for the change ${s.change}: CI refuses this run for any other`] : []),
    `  mode ${s.settings.mode}, environment ${s.settings.environment}, actions ${s.settings.actions === "all" ? "all" : s.settings.actions.join(",")}, budget ${s.settings.budget ?? "unlimited"}`,
    `next: ${(await pairStatusFromRun(store, runFile, planners[0] as string, new Date(), run)).next_command}`,
  ].join("\n");
  return { exitCode: 0, text, json: { ok: true, run: runFile, run_id: s.run_id, state: s } };
}
