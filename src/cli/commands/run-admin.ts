import { changedFilesFromList, changedFilesInRange, changedPathsRoot, commitJudged } from "../../conformance/changed-files.js";
import type { CriterionEvidence } from "../../conformance/check-conformance.js";
import { RefusalError, UsageError } from "../../errors/errors.js";
import { approveApply } from "../../gate/approve-apply.js";
import { CLOSE_RESULTS, closeWorkflow } from "../../gate/close-workflow.js";
import { type OpenStopRef, raiseStop, resolveStop } from "../../gate/hard-stops.js";
import { pairStatusFromRun, signingHint } from "../../gate/pair-status.js";
import { resolveActor } from "../../gate/resolve-actor.js";
import { folderRunStore } from "../../home/folder-run-store.js";
import { clip, parseChoice, parseName, parsePromptId, parseStopReason, parseText } from "../../input/parse-input.js";
import { shellQuote } from "../../run/next-step.js";
import type { RunState } from "../../run/run-schema.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { homeOption, storeOption } from "../home-option.js";
import { plural } from "../plural.js";

/** `twinlock approve-apply RUN ID --approver NAME`. */
export async function runApproveApply(
  runFile: string,
  id: string,
  o: CommonOptions & { approver?: string; key?: string },
): Promise<CommandResult> {
  const store = folderRunStore(homeOption(o));
  const r = await approveApply({
    run: runFile,
    store,
    planner: parsePromptId(id, "planner"),
    approver: o.approver === undefined ? undefined : parseName(o.approver, "--approver"),
    key: keyOption(o.key),
  });
  return {
    exitCode: 0,
    text: `recorded apply approval by ${r.receipt.approver}${r.receipt.signature ? " (signed)" : ""} for ${r.receipt.executor} on ${r.receipt.handoff_hash}\nstate: ${r.workflow.state}\nnext: ${
      (await pairStatusFromRun(store, runFile, r.workflow.planner, new Date(), r.run)).next_command
    }`,
    json: { ok: true, state: r.workflow.state, receipt: r.receipt },
  };
}

/** `twinlock stop RUN --reason SLUG [--workflow ID]`. */
export async function runStop(
  runFile: string,
  o: CommonOptions & { reason: string; workflow?: string; note?: string; actor?: string },
): Promise<CommandResult> {
  const reason = parseStopReason(o.reason);
  const workflow = o.workflow === undefined ? undefined : parsePromptId(o.workflow, "--workflow");
  const store = storeOption(o);
  const raised = await raiseStop({
    run: runFile,
    store,
    reason,
    workflow,
    note: o.note === undefined ? undefined : parseText(o.note, "--note"),
    actor: resolveActor(o.actor),
  });
  // The runs by ID: a run file the agent swapped for the moment names another run than the one that lives there.
  const where = `${workflow ?? "the whole run"}${raised.runs === undefined ? "" : ` of ${raised.runs.join(" and ")}`}`;
  const lift = `twinlock resolve-stop ${shellQuote(runFile)} --reason ${reason}${raised.stop === undefined ? "" : ` --stop ${raised.stop}`} --note TEXT${signingHint(store.home, raised.state.suite) ? " --key FILE" : ""}`;
  return {
    exitCode: 0,
    // Lifting a stop is a person's signed decision on a suite that requires signed receipts.
    text:
      raised.notRecorded !== undefined
        ? `${raised.notRecorded}; ${stopEffect(raised.state)} from now on. This stop (!STOP:${reason}) is not recorded: raise it again once they are in the run's log (twinlock log)`
        : raised.pending !== undefined
          ? `recorded !STOP:${reason} on ${where} in the gate home; ${stopEffect(raised.state)} from now on. It is not yet in the run's log (${raised.pending}); the run's next write puts it there first. Lift it, once it is in the log (twinlock log), with: ${lift}`
          : `recorded !STOP:${reason} on ${where}${raised.stop === undefined ? "" : ` as stop ${raised.stop}`}; ${stopEffect(raised.state)} until: ${lift}`,
    json: {
      ok: true,
      reason,
      workflow: workflow ?? null,
      stop: raised.stop ?? null,
      pending: raised.pending ?? null,
      not_recorded: raised.notRecorded ?? null,
      runs: raised.runs ?? null,
    },
  };
}

/**
 * `twinlock resolve-stop RUN --reason SLUG [--stop N]… --note TEXT`: lifts
 * the stops named by number, or the one standing stop of that reason; with
 * several standing and none named it refuses and lists them by number.
 */
export async function runResolveStop(
  runFile: string,
  o: CommonOptions & { reason: string; note: string; stop?: string[]; workflow?: string; actor?: string; key?: string },
): Promise<CommandResult> {
  const reason = parseStopReason(o.reason);
  const note = parseText(o.note, "--note");
  if (!note.trim()) throw new UsageError("--note must say how the stop was resolved");
  const stops = o.stop === undefined || o.stop.length === 0 ? undefined : o.stop.map(parseStopNumber);
  const r = await resolveStop({
    run: runFile,
    store: storeOption(o),
    reason,
    note,
    workflow: o.workflow === undefined ? undefined : parsePromptId(o.workflow, "--workflow"),
    stops,
    actor: o.actor === undefined ? undefined : resolveActor(o.actor),
    key: keyOption(o.key),
  }).catch((error: unknown) => {
    if (!(error instanceof RefusalError) || error.details.code !== "STOPS_AMBIGUOUS") throw error;
    const open = error.details.open as OpenStopRef[];
    throw new RefusalError(
      `${error.message}: pick with --stop ${open[0]?.seq ?? "N"} (repeat --stop to lift several; each is named in the signed receipt)`,
      error.details,
      { cause: error },
    );
  });
  const named = r.receipt.stops.join(", ");
  return {
    exitCode: 0,
    text: `lifted !STOP:${reason} (${r.resolved === 1 ? "stop" : "stops"} ${named}) by ${r.receipt.by}${r.receipt.signature ? " (signed)" : " (unsigned)"}`,
    json: { ok: true, reason, resolved: r.resolved, stops: r.receipt.stops, receipt: r.receipt },
  };
}

/** A stop's number as `--stop` takes it: the sequence number of its `stop_raised` event (`twinlock log` shows it). */
function parseStopNumber(value: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(value))
    throw new UsageError(`--stop takes a stop's number (its event number in twinlock log, from 1), got ${JSON.stringify(clip(value))}`);
  return Number(value);
}

/**
 * What a stop holds back: admission, and the bound session of every pair
 * already executing (any write to a run ends its sessions, the stopped
 * pair's or not).
 */
function stopEffect(state: RunState): string {
  const executing = Object.values(state.workflows).filter((w) => w.state === "executing");
  if (executing.length === 0) return "admission is refused";
  return `${executing.map((w) => w.executor).join(", ")} ${executing.length === 1 ? "is" : "are"} executing: ${executing.length === 1 ? "its" : "their"} agent session ends (every hooked tool call is denied) and admission is refused`;
}

/** `twinlock close RUN ID --result R [--residual TEXT] [--git-range A...B | --changed-files FILE] [--criterion …]` (verified needs the change). */
export async function runClose(
  runFile: string,
  id: string,
  o: CommonOptions & {
    result: string;
    residual?: string;
    actor?: string;
    key?: string;
    changedFiles?: string;
    gitRange?: string;
    criterion?: string[];
  },
): Promise<CommandResult> {
  const result = parseChoice(o.result, CLOSE_RESULTS, "--result");
  if (o.changedFiles !== undefined && o.gitRange !== undefined)
    throw new UsageError("give the changed files once: --changed-files FILE or --git-range A...B, not both");
  const criteria = (o.criterion ?? []).map(parseCriterionEvidence);
  const listed = o.changedFiles !== undefined || o.gitRange !== undefined;
  // A verified close judges the change itself, and criteria alone name no changed file: without a list the
  // close records no change, and closeWorkflow refuses it (after the state's own refusals) naming what to pass.
  const recorded = listed || (criteria.length > 0 && result !== "verified");
  // Listed or from git, changed paths are the checkout's (relative to its top folder), as a plan's targets are.
  const root = changedPathsRoot(process.cwd(), o);
  const r = await closeWorkflow({
    run: runFile,
    store: storeOption(o),
    planner: parsePromptId(id, "planner"),
    result,
    residual: o.residual === undefined ? undefined : parseText(o.residual, "--residual"),
    actor: o.actor === undefined ? undefined : resolveActor(o.actor),
    // Only a verified close is a signed decision; the other endings keep their actor.
    key: result === "verified" ? keyOption(o.key) : undefined,
    executed: recorded
      ? {
          changed:
            o.gitRange !== undefined
              ? await changedFilesInRange(root, o.gitRange)
              : o.changedFiles !== undefined
                ? changedFilesFromList(o.changedFiles, root)
                : [],
          criteria,
          root,
          // The commit judged: what the check run's success names (none outside git, or in a checkout changed since HEAD).
          ...(listed ? { commit: commitJudged(root, o) } : {}),
        }
      : undefined,
  });
  const res = r.workflow.result;
  const c = res?.execution?.conformance;
  const lines = [
    `${r.workflow.planner}: ${r.workflow.state} (${res?.outcome})${res?.residual ? `, residual: ${res.residual}` : ""}${res?.receipt ? `, verified by ${res.receipt.by}${res.receipt.signature ? " (signed)" : " (unsigned)"}` : ""}`,
    ...(res?.execution && c
      ? [
          `executed: ${plural(res.execution.changed_files.length, "file")} changed, ${plural(res.execution.criteria.length, "criterion result")} recorded${listed ? ` (paths from ${root})` : ""}`,
          ...res.execution.changed_files.filter((f) => f.sha256 === null).map((f) => `deleted: ${f.path} (not in ${root})`),
          ...c.actions_not_done.map((a) => `not done: action ${a} (no changed file in its target)`),
          ...c.files_outside_plan.map((f) => `outside the plan: ${f} (in no action's target)`),
          ...c.criteria_without_evidence.map((x) => `no evidence: criterion ${x}`),
          ...c.criteria_failed.map((x) => `failed: criterion ${x}`),
          c.actions_not_done.length + c.files_outside_plan.length + c.criteria_without_evidence.length + c.criteria_failed.length === 0
            ? "conforms: every action done, every file inside the plan, every criterion passed with evidence"
            : "does not conform to the approved plan; the deviations are recorded with the close",
        ]
      : []),
  ];
  return { exitCode: 0, text: lines.join("\n"), json: { ok: true, state: r.workflow.state, result: res } };
}

/** `C1=passed:npm test` → the result of one verification run against criterion C1. */
function parseCriterionEvidence(given: string): CriterionEvidence {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)=(passed|failed):([\s\S]+)$/.exec(given);
  if (!m || !(m[3] as string).trim())
    throw new UsageError(
      `--criterion ${JSON.stringify(given)} is not ID=passed:COMMAND or ID=failed:COMMAND, e.g. --criterion C1=passed:'npm test'`,
    );
  return { id: m[1] as string, result: m[2] as "passed" | "failed", command: parseText((m[3] as string).trim(), "--criterion") };
}
