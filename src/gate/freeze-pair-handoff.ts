import type { KeyObject } from "node:crypto";
import path from "node:path";
import { RefusalError, UsageError } from "../errors/errors.js";
import type { ReadinessSummary } from "../handoff/check-readiness.js";
import { snapshotHandoff } from "../home/frozen-bytes.js";
import { requireTransition, requireWorkflow } from "../run/refuse-transition.js";
import type { FreezeReceipt, Workflow } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import { handoffPathOf, type RunStore, recordedHandoffDir } from "../store/run-store.js";
import type { TrustRemedy } from "../trust/enforce-trust.js";
import { sealReceipt } from "../trust/seal-receipt.js";
import { personForKey } from "../trust/sign-as-reviewer.js";
import { requireScopeInPlan } from "./action-scope.js";
import { gatherPinned } from "./load-run-suite.js";
import { decisionsVoidedByRepin } from "./voided-by-repin.js";

export interface FreezeInput {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  planner: string;
  /** The handoff folder; defaults to the one frozen before. */
  handoffDir?: string;
  /** A caller's assertion of the hash; must equal the computed one. */
  handoffHash?: string;
  /** Why an identical re-freeze after requested changes is right (shown to the reviewer). */
  unchangedBecause?: string;
  /** Who freezes; with a key the suite knows, the key's owner. */
  actor?: string;
  /** A key with the `freeze` right; required on signing suites. */
  key?: KeyObject;
  now?: () => Date;
  /** For an agent's freeze over the API or MCP: refuses the real folder the copy is made from unless the run may use it (`agentHandoffPath`). */
  confine?: (realRoot: string) => void;
  /**
   * The top folder of the checkout the caller freezes from (the CLI's; never a server's working folder): on a team
   * store a folder inside it is recorded `repo:REL`, and the folder frozen before is read from it.
   */
  checkout?: string;
  /** What a refused freeze receipt says instead of the trust verdict's own advice (the caller knows the remedy: plan's relay, say). */
  remedy?: TrustRemedy;
}

export interface FreezeResult {
  run: LoadedRun;
  workflow: Workflow;
  /** The copy's readiness (its model stayed on the worker thread that judged it: the plan's action IDs stand in for it). */
  readiness: ReadinessSummary;
  hash: string;
  revision: number;
  /** Whether earlier review or consent receipts were voided by this freeze. */
  voided: boolean;
}

/**
 * Freeze a pair's handoff (SPEC §4, §5, §9): the folder is copied into the
 * gate home and the copy is what is checked for readiness, hashed and kept
 * (so what the reviewer is shown and the executor gets are these bytes).
 * A given hash is only an assertion. The revision goes up, earlier review
 * and consent become void, and the workflow moves on to plan review. On
 * signing suites the freeze is signed by a key with the `freeze` right.
 */
export async function freezePairHandoff(input: FreezeInput): Promise<FreezeResult> {
  const runDir = input.store.runFolder(input.run);
  // Gather first: the run, its pinned suite and the frozen copy; then decide under the locks.
  const { run: run0, workflow: wf0, pinned } = await gatherPinned(input.store, input.run, input.planner);
  requireTransition(input.run, wf0, "handoff_frozen", "freeze the handoff");
  const dirGiven =
    input.handoffDir ??
    (wf0.handoff ? handoffPathOf(input.store, input.run, wf0.handoff.dir, run0.state.suite.root, input.checkout) : undefined);
  if (!dirGiven) throw new UsageError(`no handoff folder: pass --handoff DIR the first time you freeze ${wf0.planner}`);
  const dir = path.resolve(dirGiven);
  // The snapshot refuses a folder overlapping the gate home, by name and by real path.
  // Copied, hashed and judged on a worker thread: the server's event loop turns on whatever the handoff holds.
  // Judged in the pinned suite's format: neither the run file nor the handoff can choose it.
  const snapshot = await snapshotHandoff(input.store.home, dir, input.confine, { runId: run0.state.run_id, format: pinned.handoffFormat });
  try {
    const readiness: ReadinessSummary = { ...(snapshot.readiness as ReadinessSummary), dir };
    if (!readiness.ready) {
      const lines = readiness.problems.slice(0, 10).map((p) => `${p.file}${p.record ? ` [${p.record}]` : ""}: ${p.message}`);
      throw new RefusalError(
        `handoff ${dir} is not ready to freeze (${readiness.problems.length} problem${readiness.problems.length > 1 ? "s" : ""}): ${lines.join("; ")}`,
        { problems: readiness.problems },
      );
    }
    // The scope is fixed when the run begins: the plan must hold every action it names.
    requireScopeInPlan(run0.state.settings.actions, readiness.actionIds, wf0.planner, "freeze the handoff");
    if (input.handoffHash !== undefined && input.handoffHash !== snapshot.hash) {
      throw new RefusalError(
        `--handoff-hash ${input.handoffHash} does not match the handoff: twinlock computed ${snapshot.hash}; the files changed or the hash is for another version`,
        { given: input.handoffHash, computed: snapshot.hash },
      );
    }
    const person = personForKey(input.key, input.actor, pinned.config, "--actor");
    // Only the run's lock is held while the freeze is decided: `keep` checks the quota and stores the bytes with no lock
    // (the collector keeps what the freeze's reservation names until the event is written).
    const { run, result } = await input.store.update(
      input.run,
      async (current) => {
        const wf = requireWorkflow(current.state.workflows, input.planner);
        requireTransition(input.run, wf, "handoff_frozen", "freeze the handoff");
        const same = wf.handoff?.hash === snapshot.hash;
        if (same && wf.state === "plan_revision_pending" && !input.unchangedBecause) {
          throw new RefusalError(
            `nothing was revised: the handoff still hashes to ${snapshot.hash}, the version the reviewer asked to change; revise it, or pass --unchanged-because TEXT to tell the reviewer why no change is needed`,
          );
        }
        // The same bytes again are a new revision only when a re-pin voided the decisions on them (present then says so),
        // or when the reviewer asked for changes and is told why none were needed.
        const voidedByRepin = same && wf.state !== "plan_revision_pending" ? decisionsVoidedByRepin(pinned, wf) : undefined;
        if (same && wf.state !== "plan_revision_pending" && voidedByRepin === undefined) {
          throw new RefusalError(
            `the handoff has not changed since revision ${wf.revision} (${snapshot.hash}); there is nothing to re-freeze`,
          );
        }
        // Beside a run file the folder is recorded relative to it (the pair moves together); in a team store relative to
        // the suite when it lies inside it (so CI finds it in its checkout); otherwise absolute.
        const storedDir = recordedHandoffDir(dir, {
          runFolder: runDir,
          suiteRoot: current.state.suite.root,
          ...(input.checkout === undefined ? {} : { repoRoot: input.checkout }),
        });
        const revision = wf.revision + 1;
        const voided = wf.reviews.length > 0 || wf.consents.length > 0;
        const unsigned: FreezeReceipt = {
          kind: "freeze",
          run_id: current.state.run_id,
          planner: wf.planner,
          executor: wf.executor,
          by: person,
          handoff_hash: snapshot.hash,
          revision,
          at: (input.now?.() ?? new Date()).toISOString(),
        };
        const receipt = sealReceipt(unsigned, {
          key: input.key,
          person,
          right: "freeze",
          config: pinned.config,
          what: "freeze",
          remedy: input.remedy,
        });
        // Decided: the frozen bytes go into the home (the quota checked again, against what it holds now) before
        // the event that names them is written.
        await snapshot.keep();
        return {
          events: [
            {
              type: "handoff_frozen",
              actor: person,
              data: {
                planner: wf.planner,
                revision,
                hash: snapshot.hash,
                dir: storedDir,
                files: snapshot.files,
                receipt,
                unchanged_because: same ? (input.unchangedBecause ?? null) : null,
              },
            },
            { type: "review_requested", actor: person, data: { planner: wf.planner, revision, hash: snapshot.hash } },
          ],
          result: { revision, voided },
        };
      },
      { now: input.now },
    );
    const workflow = run.state.workflows[input.planner] as Workflow;
    return { run, workflow, readiness, hash: snapshot.hash, revision: result.revision, voided: result.voided };
  } finally {
    await snapshot.dispose();
  }
}
