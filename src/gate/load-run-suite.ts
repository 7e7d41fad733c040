import { RefusalError } from "../errors/errors.js";
import type { GateHome } from "../home/gate-home.js";
import { loadPinnedSuite, type PinnedSuite, requirePinnedPair } from "../home/suite-pins.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import type { RunState, Workflow } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import { pairDigest } from "../twin/pair-digest.js";
import { resolveExactTwin } from "../twin/resolve-exact-twin.js";

/**
 * The suite and policy a run is judged by, from the home's pin (never from
 * the run file), with the workflow's pairing checked against the pin and
 * against the run's own record of it. Parsed as far as the run's prompts,
 * their twins and `alsoIds` (e.g. an executor someone asks to admit) need.
 */
export function loadRunSuite(home: GateHome, state: RunState, wf?: Workflow, alsoIds: readonly string[] = []): PinnedSuite {
  const ids = [...(wf ? [wf.planner, wf.executor] : Object.values(state.workflows).flatMap((w) => [w.planner, w.executor])), ...alsoIds];
  const pinned = loadPinnedSuite(home, state.suite, ids);
  if (wf) requireSamePairing(pinned, wf);
  return pinned;
}

/**
 * What a decision gathers before it takes the locks (the run as the home
 * knows it, the workflow, and the pinned suite with the pairing checked):
 * the run's suite cannot change, so none of it needs the lock.
 */
export async function gatherPinned(
  store: RunStore,
  ref: string,
  planner: string,
): Promise<{ run: LoadedRun; workflow: Workflow; pinned: PinnedSuite }> {
  const run = await store.read(ref);
  const workflow = requireWorkflow(run.state.workflows, planner);
  return { run, workflow, pinned: loadRunSuite(store.home, run.state, workflow) };
}

/** Throw unless the suite still resolves the workflow's planner to the run's executor, as pinned and as recorded. */
export function requireSamePairing(pinned: PinnedSuite, wf: Workflow): void {
  const resolved = resolveExactTwin(pinned.suite, wf.planner);
  if (!resolved.ok) throw new RefusalError(`${wf.planner} no longer has an exact twin in the suite: ${resolved.reasons.join("; ")}`);
  const { executor } = resolved.twin;
  requirePinnedPair(pinned, wf.planner, executor.id);
  if (
    executor.id !== wf.executor ||
    (executor.title ?? executor.id) !== wf.executor_title ||
    pairDigest(resolved.twin.planner, executor) !== wf.pair_digest
  ) {
    throw new RefusalError(
      `the pairing of ${wf.planner} changed in the suite since the run began (now ${executor.id}, "${executor.title}"); a changed pairing needs a new run`,
      { attack: "repaired-twin" },
    );
  }
}

/**
 * Throw unless the executor file is still the one the person was shown:
 * a page renders the executor, then the decision binds the file as it is
 * when signed, and the two must be the same bytes.
 */
export function requireShownExecutor(wf: Workflow, now: string, shown: string | undefined): void {
  if (shown === undefined || shown === now) return;
  throw new RefusalError(
    `the executor ${wf.executor} changed since it was shown (shown ${shown}, now ${now}); read it again and decide on the file as it is`,
    { code: "EXECUTOR_CHANGED", attack: "executor-swap", shown, current: now },
  );
}

/** sha256 of the workflow's executor prompt file, of the bytes the suite was parsed from (never read again). */
export function executorDigest(pinned: PinnedSuite, wf: Workflow): string {
  const prompt = pinned.suite.byId.get(wf.executor);
  if (!prompt) throw new RefusalError(`${wf.executor} is no longer a prompt of suite ${pinned.pin.suite_id}`);
  return prompt.sha256;
}
