import { RefusalError } from "../errors/errors.js";
import { receiptHash } from "../run/receipt-hash.js";
import { requireTransition, requireWorkflow } from "../run/refuse-transition.js";
import type { ApplyApproval, Workflow } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import { sealReceipt } from "../trust/seal-receipt.js";
import { personForKey } from "../trust/sign-as-reviewer.js";
import type { ReceiptKey } from "../trust/sign-receipt.js";
import { gatherPinned } from "./load-run-suite.js";
import { requireCurrentHash } from "./review-pair-plan.js";

/**
 * The separate apply approval of the APPLY_APPROVED path
 * (`approval_pending → dry_run_ready`), bound to the current hash and to the
 * exact consent receipt it approves.
 */
export async function approveApply(input: {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  planner: string;
  approver?: string;
  /** The hash the person was shown; a front end passes it so a revision frozen since is refused (STALE_HASH). */
  handoffHash?: string;
  /** The person's key file, or a passkey signer (the gate server). */
  key?: ReceiptKey;
  now?: () => Date;
}): Promise<{ run: LoadedRun; receipt: ApplyApproval; workflow: Workflow }> {
  const { pinned } = await gatherPinned(input.store, input.run, input.planner);
  const { run, result } = await input.store.update(
    input.run,
    (current) => {
      const wf = requireWorkflow(current.state.workflows, input.planner);
      // The hash first: a person deciding on a revision that is gone hears that, whatever state the pair moved to since.
      requireCurrentHash(wf, input.handoffHash, "record the apply approval", input.run);
      requireTransition(input.run, wf, "apply_approved", "record the apply approval");
      const consent = wf.consents[wf.consents.length - 1];
      const handoff = wf.handoff;
      if (!consent || !handoff || consent.decision !== "approved" || consent.handoff_hash !== handoff.hash) {
        throw new RefusalError(`${wf.planner} has no granted consent for the current hash to approve`);
      }
      const config = pinned.config;
      const approver = personForKey(input.key, input.approver, config, "--approver");
      const unsigned: ApplyApproval = {
        kind: "apply_approval",
        run_id: current.state.run_id,
        planner: wf.planner,
        executor: wf.executor,
        approver,
        handoff_hash: handoff.hash,
        revision: handoff.revision,
        consent_hash: receiptHash(consent),
        at: (input.now?.() ?? new Date()).toISOString(),
      };
      const receipt = sealReceipt(unsigned, {
        key: input.key,
        person: approver,
        right: "apply",
        config,
        workflow: wf,
        what: "approve the apply of",
      });
      return { events: [{ type: "apply_approved", actor: approver, data: { planner: wf.planner, receipt } }], result: receipt };
    },
    { now: input.now },
  );
  return { run, receipt: result, workflow: run.state.workflows[input.planner] as Workflow };
}
