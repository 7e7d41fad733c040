import { RefusalError } from "../errors/errors.js";
import { frozenActionIds } from "../home/frozen-records.js";
import { parseDuration } from "../input/parse-input.js";
import { describeNextStep, nextStepData } from "../run/next-step.js";
import { legalNextStep, requireTransition, requireWorkflow } from "../run/refuse-transition.js";
import type { ConsentReceipt, Workflow } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import { distinctApprovers } from "../trust/enforce-trust.js";
import { sealReceipt } from "../trust/seal-receipt.js";
import { personForKey } from "../trust/sign-as-reviewer.js";
import type { ReceiptKey } from "../trust/sign-receipt.js";
import { requireScopeInPlan } from "./action-scope.js";
import { consentQuestion } from "./consent-question.js";
import { executorDigest, gatherPinned, requireShownExecutor } from "./load-run-suite.js";
import { requireCurrentHash } from "./review-pair-plan.js";

export interface ConsentInput {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  planner: string;
  approve: boolean;
  handoffHash?: string;
  /** Who consents; with a key the suite knows, the key's owner. */
  user?: string;
  /** The person's key file, or a passkey signer (the gate server). */
  key?: ReceiptKey;
  /** Lifetime of the consent in milliseconds; undefined for the suite's default, null for none. */
  expiresInMs?: number | null;
  /** The executor file's digest the person was shown, when a front end showed it: a file changed since is refused. */
  executorDigest?: string;
  now?: () => Date;
  expectedRevision?: number;
}

/**
 * Record the execution consent decision (SPEC §5): only after an approved
 * review of the current hash, only for the exact twin as the suite resolves
 * it now, binding the run's mode, environment, action scope and budget.
 * Granting writes the executor, and nothing else, to
 * `authorized_execution_prompt_ids`.
 */
export async function consentPairExecution(input: ConsentInput): Promise<{ run: LoadedRun; receipt: ConsentReceipt; workflow: Workflow }> {
  // Gather the pinned suite (pairing checked against the pin and the run) and the executor's digest first.
  const { workflow, pinned } = await gatherPinned(input.store, input.run, input.planner);
  const execDigest = executorDigest(pinned, workflow);
  requireShownExecutor(workflow, execDigest, input.executorDigest);
  const { run, result } = await input.store.update(
    input.run,
    (current) => {
      const wf = requireWorkflow(current.state.workflows, input.planner);
      const settings = current.state.settings;
      const event = input.approve ? "consent_granted" : "consent_declined";
      requireTransition(
        input.run,
        wf,
        event,
        `record execution consent`,
        input.approve ? (settings.mode === "APPLY_APPROVED" ? "apply_approved_path" : "dry_run_path") : undefined,
      );
      const handoff = wf.handoff;
      if (!handoff) throw new RefusalError(`${wf.planner} has no frozen handoff`);
      if (wf.state !== "execution_consent_pending") {
        // Only a consent that expired unused may be asked again or withdrawn.
        const last = wf.consents[wf.consents.length - 1];
        const now = input.now?.() ?? new Date();
        const expired = last?.expires_at != null && now.getTime() >= Date.parse(last.expires_at) && last.consumed_at === null;
        if (!expired) {
          const next = describeNextStep(wf.state, { run: input.run, planner: wf.planner, executor: wf.executor, hash: handoff.hash });
          throw new RefusalError(
            `cannot record execution consent: ${wf.planner} is in state ${wf.state} with a consent for revision ${handoff.revision}${last?.expires_at ? ` valid until ${last.expires_at}` : ""}; ${legalNextStep(next)} — consent may be asked again only after it expires unused`,
            {
              code: "TRANSITION_REFUSED",
              state: wf.state,
              next_action: next.action,
              next_command: next.command,
              next_step: nextStepData(next),
            },
          );
        }
      }
      if (input.approve && input.handoffHash === undefined) {
        throw new RefusalError(
          `consent must name the exact version: pass --handoff-hash ${handoff.hash} (revision ${handoff.revision}); the question is: ${consentQuestion(wf, current.state.settings)}`,
        );
      }
      requireCurrentHash(wf, input.handoffHash, "record execution consent", input.run);
      if (input.approve)
        requireScopeInPlan(
          settings.actions,
          frozenActionIds(input.store.home, handoff.files, pinned.handoffFormat),
          wf.planner,
          "record execution consent",
        );
      const review = wf.reviews[wf.reviews.length - 1];
      if (review?.decision !== "approved" || review.handoff_hash !== handoff.hash || review.revision !== handoff.revision) {
        throw new RefusalError(
          `no approved review of revision ${handoff.revision} (${handoff.hash}); consent needs an approved plan first`,
        );
      }
      if (review.policy_digest !== pinned.policyDigest)
        throw new RefusalError(
          `the suite's policy changed since the plan was approved (approved under ${review.policy_digest}, now ${pinned.policyDigest}); the plan must be reviewed again under the policy as it is now`,
          { attack: "policy-changed" },
        );
      if (review.executor_digest !== execDigest)
        throw new RefusalError(
          `${wf.executor}'s prompt file changed since the plan was approved (approved with ${review.executor_digest}, now ${execDigest}); the plan must be reviewed again for the executor as it is now`,
          { attack: "executor-changed" },
        );
      const now = input.now?.() ?? new Date();
      const lifetime = input.expiresInMs === undefined ? defaultLifetime(pinned.config.policies?.consent_expiry) : input.expiresInMs;
      const config = pinned.config;
      // Re-check the approvals under the policy as it is now: a forged or since-revoked approval earns no consent.
      const needed = config.policies?.required_approvals ?? 1;
      const approvers = distinctApprovers(wf, config);
      if (approvers.length < needed) {
        throw new RefusalError(
          `refused: revision ${handoff.revision} has ${approvers.length} trusted approval(s) and the suite requires ${needed}; consent needs an approved plan (twinlock verify-receipts ${input.run})`,
          { attack: "untrusted-approval" },
        );
      }
      const user = personForKey(input.key, input.user, config, "--user");
      const unsigned: ConsentReceipt = {
        kind: "consent",
        run_id: current.state.run_id,
        planner: wf.planner,
        executor: wf.executor,
        executor_title: wf.executor_title,
        user,
        decision: input.approve ? "approved" : "declined",
        handoff_hash: handoff.hash,
        revision: handoff.revision,
        mode: settings.mode,
        environment: settings.environment,
        actions: settings.actions,
        budget: settings.budget,
        expires_at: lifetime === null ? null : new Date(now.getTime() + lifetime).toISOString(),
        policy_digest: pinned.policyDigest,
        executor_digest: execDigest,
        at: now.toISOString(),
      };
      const receipt = sealReceipt(unsigned, { key: input.key, person: user, right: "consent", config, workflow: wf, what: "consent to" });
      return { events: [{ type: event, actor: user, data: { planner: wf.planner, receipt } }], result: receipt };
    },
    { now: input.now, expectedRevision: input.expectedRevision },
  );
  return { run, receipt: result, workflow: run.state.workflows[input.planner] as Workflow };
}

function defaultLifetime(expiry: string | undefined): number | null {
  return expiry === undefined ? null : parseDuration(expiry, "twinlock.yaml policies.consent_expiry");
}

export { consentQuestion };
