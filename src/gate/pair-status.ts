import { hashHandoff } from "../handoff/hash-handoff.js";
import { gateFolders } from "../home/gate-folders.js";
import type { GateHome } from "../home/gate-home.js";
import { loadPinnedPolicy, loadPinnedSuite, type PinnedPolicy, type PinnedSuite } from "../home/suite-pins.js";
import { describeChanges, isApplyMode, openStops, passedDryRuns } from "../run/admission-checks.js";
import { describeNextStep, makeNextStep, nextStepData, withKeyWhenSigning } from "../run/next-step.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import type { RunState, Workflow } from "../run/run-schema.js";
import type { State } from "../run/transition-table.js";
import type { LoadedRun } from "../store/run-file.js";
import { handoffPathOf, type RunStore } from "../store/run-store.js";
import { consentQuestion } from "./consent-question.js";
import { declaresDryRun, dryRunStep } from "./dry-run-needed.js";
import { type PairStatus, questionFor } from "./pair-status-from-flags.js";
import { decisionsVoidedByRepin } from "./voided-by-repin.js";

export { type PairStatus, pairStatusFromFlags, REVIEW_STATUSES, type ReviewStatus, reviewInvitation } from "./pair-status-from-flags.js";

/** Status of one pair from a run file (`loaded`: the run as the caller just read it from the store, not read again). */
export async function pairStatusFromRun(
  store: RunStore,
  runFile: string,
  id: string,
  now: Date = new Date(),
  loaded?: LoadedRun,
): Promise<PairStatus> {
  const home = store.home;
  const run = loaded ?? (await store.read(runFile));
  const byExecutor = Object.values(run.state.workflows).find((w) => w.executor === id);
  const wf = byExecutor ?? requireWorkflow(run.state.workflows, id);
  let next = describeNextStep(wf.state, { run: runFile, planner: wf.planner, executor: wf.executor, hash: wf.handoff?.hash });
  const last = wf.consents[wf.consents.length - 1];
  const expired =
    (wf.state === "dry_run_ready" || wf.state === "approval_pending") &&
    last?.expires_at != null &&
    last.consumed_at === null &&
    now.getTime() >= Date.parse(last.expires_at);
  if (expired) {
    next = makeNextStep(
      `ask the consent question again: the consent expired at ${last?.expires_at} unused (or withdraw it with --decline)`,
      "consent-pair-execution",
      [runFile, wf.planner],
      [["--handoff-hash", String(wf.handoff?.hash)]],
      ["--approve", "--decline"],
    );
  }
  // A frozen handoff edited since: the one legal step is to re-freeze it (admission would refuse anyway).
  let handoffChanged: string[] | null = null;
  if (wf.handoff && REHASHED_STATES.has(wf.state)) {
    try {
      const current = await hashHandoff(handoffPathOf(store, runFile, wf.handoff.dir, run.state.suite.root), gateFolders(store.home));
      if (current.hash !== wf.handoff.hash) handoffChanged = describeChanges(wf.handoff.files, current.files);
    } catch (error) {
      handoffChanged = [(error as Error).message];
    }
  }
  if (handoffChanged) {
    next = makeNextStep(
      `re-freeze: the handoff changed since revision ${wf.revision} was frozen (${handoffChanged.join(", ") || "content differs"}); decisions on revision ${wf.revision} will not carry over`,
      "freeze-pair-handoff",
      [runFile, wf.planner],
    );
  }
  const unresolvedStops = openStops(run.state, wf.planner);
  // The pinned policy (twinlock.yaml and the pin alone: no prompt file is read) says whether the decisions still hold.
  const policy = policyOrUndefined(home, run.state.suite);
  // Before an expired consent's renewal: a consent asked again would still stand on a review the re-pin voided.
  const voided = policy && !handoffChanged && DECIDED_STATES.has(wf.state) && decisionsVoidedByRepin(policy, wf);
  if (voided) {
    next = makeNextStep(
      `re-freeze the same handoff as revision ${wf.revision + 1}, then review and consent again: ${voided}, so admission refuses them`,
      "freeze-pair-handoff",
      [runFile, wf.planner],
    );
  } else if (!handoffChanged && !expired && wf.state === "dry_run_ready") {
    // Admission refuses while a !STOP is open: lifting it (by a person with the stop right) comes first.
    const stop = unresolvedStops[0];
    if (stop)
      next = makeNextStep(
        `resolve the !STOP:${stop.reason} raised ${stop.workflow === null ? "on the run" : `on ${stop.workflow}`} by ${stop.raised_by}: admission refuses while it is open`,
        "resolve-stop",
        [runFile],
        // The stop by its number: a lift names exactly the stops it lifts.
        [
          ["--reason", stop.reason],
          ["--stop", String(stop.seq)],
          ["--note", "TEXT"],
        ],
      );
    // Only an APPLY run with no passed dry run reads the suite, for the executor's dry_run_required.
    else if (policy && isApplyMode(run.state.settings.mode) && passedDryRuns(wf).length === 0) {
      const pinned = pinnedOrUndefined(home, run.state, wf, policy);
      if (pinned && declaresDryRun(pinned.suite.byId.get(wf.executor))) next = dryRunStep(runFile, wf);
    }
  }
  next = withKeyWhenSigning(next, signsReceipts(policy));
  return {
    planner: wf.planner,
    executor: wf.executor,
    executor_title: wf.executor_title,
    state: wf.state,
    revision: wf.revision,
    handoff_hash: wf.handoff?.hash ?? null,
    next_action: next.action,
    next_command: next.command,
    next_step: nextStepData(next),
    question: expired ? consentQuestion(wf, run.state.settings) : questionFor(wf.state, wf, run.state.settings),
    authorized_execution_prompt_ids: run.state.authorized_execution_prompt_ids,
    handoff_changed: handoffChanged,
    unresolved_stops: unresolvedStops.map((s) => `!STOP:${s.reason}`),
    source: "run",
  };
}

/** States after a review was decided, in which a re-pin may have voided the decisions. */
const DECIDED_STATES = new Set<State>(["execution_consent_pending", "approval_pending", "dry_run_ready"]);

/** The run's pinned policy, or undefined when it cannot be loaded (a hint then says nothing of it). */
function policyOrUndefined(home: GateHome, suite: RunState["suite"]): PinnedPolicy | undefined {
  try {
    return loadPinnedPolicy(home, suite);
  } catch {
    return undefined;
  }
}

/** The run's pinned suite for the pair under its loaded `policy`, or undefined when it cannot be loaded (a hint then says nothing of it). */
function pinnedOrUndefined(home: GateHome, state: RunState, wf: Workflow, policy: PinnedPolicy): PinnedSuite | undefined {
  try {
    return loadPinnedSuite(home, state.suite, [wf.planner, wf.executor], policy);
  } catch {
    return undefined;
  }
}

/** Whether printed commands need `--key FILE`: the pinned policy asks for signed receipts, or cannot be loaded (then assumed to). */
function signsReceipts(policy: PinnedPolicy | undefined): boolean {
  return policy === undefined || policy.config.policies?.require_signed_receipts === true;
}

/** States in which a frozen handoff must still hash to its frozen value. */
const REHASHED_STATES = new Set<State>(["plan_review_pending", "execution_consent_pending", "approval_pending", "dry_run_ready"]);

/** Whether the pinned suite asks for signed receipts (so printed commands need `--key FILE`); a suite that cannot be loaded is treated as signing. */
export function signingHint(home: GateHome, suite: RunState["suite"]): boolean {
  return signsReceipts(policyOrUndefined(home, suite));
}
