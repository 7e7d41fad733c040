import path from "node:path";
import { type ChangedFile, type CriterionEvidence, checkConformance, GITLINK, whyNotDone } from "../conformance/check-conformance.js";
import { hashCanonical } from "../crypto/canonical-hash.js";
import { ConflictError, RefusalError, UsageError } from "../errors/errors.js";
import { readFrozenModel } from "../home/frozen-records.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { resolveActor } from "../input/resolve-actor.js";
import { openStops } from "../run/admission-checks.js";
import { RECEIPT_KINDS } from "../run/receipt-kinds.js";
import { requireTransition, requireWorkflow } from "../run/refuse-transition.js";
import type { Execution, VerificationReceipt, Workflow } from "../run/run-schema.js";
import { isFinal } from "../run/transition-table.js";
import type { LoadedRun } from "../store/run-file.js";
import { type RunStore, resolveHandoffDir } from "../store/run-store.js";
import type { TrustRemedy } from "../trust/enforce-trust.js";
import { sealReceipt } from "../trust/seal-receipt.js";
import { personForKey } from "../trust/sign-as-reviewer.js";
import type { ReceiptKey } from "../trust/sign-receipt.js";
import { requireCurrentHash } from "./review-pair-plan.js";

export const CLOSE_RESULTS = ["verified", "failed", "rolled_back", "abandoned"] as const;
export type CloseResult = (typeof CLOSE_RESULTS)[number];

/** Why a verified close without the executed change is refused, and what to pass. */
export const VERIFIED_NEEDS_CHANGE =
  "closing as verified needs the executed change to judge against the admitted actions: pass --git-range BASE...HEAD or --changed-files FILE (with --criterion ID=passed:COMMAND for each acceptance criterion)";

/** Why the agent's report can never be a verified close. */
export const VERIFIED_IS_A_PERSONS_CALL =
  "verified is a person's call on the executed change, never the agent's report: report failed, rolled_back or abandoned, or ask a person with the verify right to close it verified";

/**
 * Close a workflow. After execution: `verified`, `failed` or `rolled_back`,
 * with residuals. Before execution: `abandoned` (closed) or `failed`, both
 * with a residual record saying what was left undone.
 *
 * `verified` is a person's call: a verification receipt bound to the change
 * recorded with the close, signed on signing suites by a key (or passkey)
 * with the `verify` right, and refused when the change does not conform.
 * An agent's report (`report`: MCP, the agent API) is recorded as its
 * report and can never say verified.
 */
export async function closeWorkflow(input: {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  planner: string;
  result: CloseResult;
  residual?: string;
  /** Who closes it (a verified close with `key`: the key's owner, and a name other than theirs is refused). */
  actor?: string;
  /** A verified close's signer: a key or passkey with the `verify` right (required on signing suites). */
  key?: ReceiptKey;
  /** The agent's report of how its work ended: recorded as such, and never `verified`. */
  report?: boolean;
  /** The frozen hash the person was shown (a front end passes it): a revision frozen since is refused (STALE_HASH). */
  handoffHash?: string;
  /**
   * The executed change (only after execution): changed files relative to
   * `root` (the checkout the executor changed; default the current folder)
   * and the verification result per acceptance criterion ID, and the commit
   * it was judged at (`commitJudged`; none outside git): recorded with the
   * change, so signed by the verification receipt, and the only commit a
   * check run's success names.
   */
  executed?: { changed: ChangedFile[]; criteria: CriterionEvidence[]; root?: string; commit?: string };
  now?: () => Date;
}): Promise<{ run: LoadedRun; workflow: Workflow }> {
  if (input.report && input.result === "verified")
    throw new RefusalError(VERIFIED_IS_A_PERSONS_CALL, { attack: "agent-verifies-own-work" });
  const verifying = input.result === "verified";
  const config = verifying ? loadPinnedPolicy(input.store.home, (await input.store.read(input.run)).state.suite).config : undefined;
  const actor = config ? personForKey(input.key, input.actor, config, "--actor") : resolveActor(input.actor);
  const execution = input.executed ? await gatherExecution(input.store, input.run, input.planner, input.executed) : undefined;
  const { run } = await input.store.update(
    input.run,
    (current) => {
      const wf = requireWorkflow(current.state.workflows, input.planner);
      // A closed or failed workflow: the standard refusal, naming the state and that nothing follows.
      if (isFinal(wf.state)) requireTransition(input.run, wf, "closed", "close the workflow");
      requireCurrentHash(wf, input.handoffHash, `close ${input.result}`, input.run);
      const executing = wf.state === "executing";
      // Which results a state allows is the transition table's rule, so a wrong one is refused (exit 1), as an illegal transition is.
      if (!executing && input.result !== "failed" && input.result !== "abandoned") {
        throw new RefusalError(
          `${wf.planner} is ${wf.state}, not executing, so it cannot close ${input.result}: close it with --result abandoned or failed and a --residual record`,
          { code: "TRANSITION_REFUSED", state: wf.state },
        );
      }
      if (executing && input.result === "abandoned")
        throw new RefusalError(
          `${wf.planner} is executing, so it cannot close abandoned: an executing workflow closes as verified, failed or rolled_back`,
          { code: "TRANSITION_REFUSED", state: wf.state },
        );
      if (!executing && !input.residual?.trim())
        throw new UsageError("closing before execution needs --residual TEXT recording what was left undone");
      if (!executing && input.result === "failed") {
        requireTransition(input.run, wf, "failed", "mark the workflow failed");
        return {
          events: [{ type: "failed", actor, data: { planner: wf.planner, residual: input.residual as string } }],
          result: undefined,
        };
      }
      requireTransition(input.run, wf, "closed", "close the workflow");
      if (execution && !executing)
        throw new RefusalError(
          `${wf.planner} is ${wf.state}: only an executing workflow records an executed change (--changed-files, --criterion)`,
          { code: "TRANSITION_REFUSED", state: wf.state },
        );
      // "verified" is the word CI takes for approved work: not while a person's stop holds the pair or the run.
      const stop = input.result === "verified" ? openStops(current.state, wf.planner)[0] : undefined;
      if (stop)
        throw new RefusalError(
          `${wf.planner} is held by the stop ${stop.reason}${stop.workflow === null ? " on the whole run" : ""}, so the work is not verified; a person lifts the stop first, or close with --result failed or rolled_back`,
          { attack: "verified-under-stop" },
        );
      // "verified" is a judgement of the change itself: without the change recorded there is nothing to judge it by.
      if (input.result === "verified" && !execution) throw new UsageError(VERIFIED_NEEDS_CHANGE);
      if (input.result === "verified" && execution) {
        const deviations = deviationsOf(execution.record.conformance, execution.record.changed_files, execution.why);
        if (deviations.length > 0)
          throw new RefusalError(
            `${wf.planner}'s change does not conform to the approved plan (${deviations.join("; ")}), so the work is not verified; close with --result failed or rolled_back (the deviations are kept with the close)`,
            { deviations },
          );
      }
      if (execution && wf.handoff?.hash !== execution.hash)
        throw new ConflictError(
          `${wf.planner}'s frozen handoff changed while closing (${execution.hash}, now ${wf.handoff?.hash}); close again`,
        );
      const receipt =
        config && execution && wf.handoff
          ? sealReceipt(
              {
                kind: "verification",
                run_id: current.state.run_id,
                planner: wf.planner,
                executor: wf.executor,
                handoff_hash: wf.handoff.hash,
                revision: wf.handoff.revision,
                result: "verified",
                execution_hash: hashCanonical(execution.record),
                by: actor,
                at: (input.now?.() ?? new Date()).toISOString(),
              } satisfies VerificationReceipt,
              {
                key: input.key,
                person: actor,
                right: RECEIPT_KINDS.verification.right,
                config,
                what: "verify",
                remedy: verifiedCloseRemedy,
              },
            )
          : undefined;
      return {
        events: [
          {
            type: "closed",
            actor,
            data: {
              planner: wf.planner,
              outcome: input.result,
              residual: input.residual ?? null,
              ...(execution ? { execution: execution.record } : {}),
              ...(receipt ? { receipt } : {}),
              ...(input.report ? { report: true as const } : {}),
            },
          },
        ],
        result: undefined,
      };
    },
    { now: input.now },
  );
  return { run, workflow: run.state.workflows[input.planner] as Workflow };
}

/**
 * Gather, then decide: the approved plan read from the frozen bytes in the
 * gate home (never from the live folder), then the executed change held
 * against it. A criterion ID the plan does not have is bad input.
 */
async function gatherExecution(
  store: RunStore,
  runRef: string,
  planner: string,
  executed: { changed: ChangedFile[]; criteria: CriterionEvidence[]; root?: string; commit?: string },
): Promise<{ hash: string; record: Execution; why: Map<string, string[]> }> {
  const run = await store.read(runRef);
  const wf = requireWorkflow(run.state.workflows, planner);
  if (wf.state !== "executing" || !wf.handoff)
    throw new RefusalError(
      `${planner} is ${wf.state}: only an executing workflow records an executed change (--changed-files, --criterion)`,
      { code: "TRANSITION_REFUSED", state: wf.state },
    );
  const model = readFrozenModel(store.home, wf.handoff.files, loadPinnedPolicy(store.home, run.state.suite).handoffFormat);
  const known = new Set(model.criteria.map((c) => c.id));
  const unknown = executed.criteria.find((c) => !known.has(c.id));
  if (unknown)
    throw new UsageError(
      `--criterion ${unknown.id} is not an acceptance criterion of ${planner}'s plan; its criteria are ${[...known].join(", ") || "none"}`,
    );
  const root = path.resolve(executed.root ?? ".");
  const runFile = path.resolve(run.path);
  // A repo: folder is the closing checkout's own record (its top is `root` when paths come from git).
  const handoffDir = resolveHandoffDir(wf.handoff.dir, {
    runFolder: store.runFolder(runRef),
    suiteRoot: run.state.suite.root,
    repoRoot: root,
  });
  const own = [path.relative(root, runFile), `${path.relative(root, handoffDir)}/`]
    .filter((p) => p !== "" && !p.startsWith("..") && !path.isAbsolute(p))
    .map((p) => p.split(path.sep).join("/"));
  // The plan held against the change is the part the gate admitted: an action nobody consented to is not approved work.
  const admission = wf.admissions[wf.admissions.length - 1];
  const admitted = new Set(admission?.requested.actions ?? []);
  const actions = model.actions.filter((a) => admitted.has(a.id));
  const conformance = checkConformance({
    actions,
    criteria: model.criteria,
    changed: executed.changed,
    evidence: executed.criteria,
    ownRecords: own,
  });
  return {
    hash: wf.handoff.hash,
    record: {
      changed_files: executed.changed,
      criteria: executed.criteria,
      ...(executed.commit !== undefined ? { commit: executed.commit } : {}),
      conformance,
    },
    why: whyNotDone(actions, executed.changed, conformance.actions_not_done),
  };
}

/**
 * Each way a recorded change departs from its plan, as one phrase (the first
 * few, then how many more): none when it conforms. A submodule pointer among
 * the changed paths is one: what its commit holds is not judged here.
 */
function deviationsOf(c: Execution["conformance"], changed: readonly ChangedFile[], why: Map<string, string[]>): string[] {
  const all = [
    ...changed.filter((f) => f.mode === GITLINK).map((f) => `${f.path} is a submodule pointer, not a file`),
    ...c.criteria_failed.map((x) => `acceptance criterion ${x} failed`),
    ...c.criteria_without_evidence.map((x) => `criterion ${x} has no evidence`),
    ...c.actions_not_done.map((a) => {
      const idle = why.get(a);
      return `action ${a} not done${idle ? ` (${idle.join(", ")}; an action's target is done by the file written, not deleted)` : ""}`;
    }),
    ...c.files_outside_plan.map((f) => `${f} is outside the plan`),
  ];
  const shown = 5;
  return all.length > shown ? [...all.slice(0, shown), `${all.length - shown} more`] : all;
}

/** How to sign a verified close the suite does not trust yet: the key to give, or the reviewers' entry to change and re-pin. */
const verifiedCloseRemedy: TrustRemedy = (v) => {
  const repin = "in twinlock.yaml and re-pin it (twinlock trust pin --suite DIR --key PINNER.key)";
  if (v.code === "unsigned")
    return "no key given: a verified close on this suite is signed by a reviewer holding the verify right; pass --key FILE or set TWINLOCK_KEY";
  if (v.code === "no-right")
    return `${v.reason}: close verified with a key that has the verify right, or add verify to that reviewer's rights under \`reviewers:\` ${repin}`;
  if (v.code === "unknown-key") return `${v.reason}: add it under \`reviewers:\` with the verify right ${repin}`;
  return undefined;
};
