import { ADMISSION_CHECKS } from "../run/admission/admission-check-registry.js";
import type { RecordedAdmission } from "../run/admission-checks.js";
import { applyEventOwned } from "../run/apply-event.js";
import { receiptHash } from "../run/receipt-hash.js";
import { RECEIPT_KINDS } from "../run/receipt-kinds.js";
import type { AdmissionReceipt, RunEvent, RunState } from "../run/run-schema.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { judgeReceiptTrust } from "../trust/judge-receipt-trust.js";

/** One admission of the run re-judged from the run's own recorded facts: what does not hold, empty when all does. */
export interface AdmissionRejudgement {
  seq: number;
  planner: string;
  receipt: AdmissionReceipt;
  problems: string[];
}

/**
 * Re-judge every `admitted` event of a verified chain against the state the
 * events before it replay to, as admission judged it (SPEC §5), by every row
 * of ADMISSION_CHECKS that can be judged from the run alone: no stop open
 * on the run or the workflow, every lifted stop lifted by a receipt trusted
 * with the `stop` right, the consent it names approved, unexpired at the
 * admission's time and for the hash and revision of an approved review, its
 * executor the admitted one, an apply approval for APPLY_APPROVED, and one
 * admission per consent. Only what the run records can be re-judged: an
 * event removed before the chain was rebuilt leaves no trace here.
 */
export function rejudgeAdmissions(events: readonly RunEvent[], config: SuiteConfig): AdmissionRejudgement[] {
  const out: AdmissionRejudgement[] = [];
  const consentUses = new Map<string, number>();
  let state: RunState | undefined;
  for (const event of events) {
    if (event.type === "admitted" && state) {
      const { planner, receipt } = event.data as { planner: string; receipt: AdmissionReceipt };
      const uses = (consentUses.get(receipt.consent_hash) ?? 0) + 1;
      consentUses.set(receipt.consent_hash, uses);
      out.push({ seq: event.seq, planner, receipt, problems: judgeOne(state, planner, receipt, event.at, uses, config) });
    }
    // The state is this loop's own (judgeOne keeps none of it), so each event changes it in place.
    state = applyEventOwned(state, event);
  }
  return out;
}

/** What does not hold of one admission, judged on the state just before it by every check that can be judged from the run alone. */
function judgeOne(state: RunState, planner: string, receipt: AdmissionReceipt, at: string, uses: number, config: SuiteConfig): string[] {
  const workflow = state.workflows[planner];
  if (!workflow) return [`planner ${planner} is not in the run`];
  const recorded: RecordedAdmission = {
    state,
    planner,
    workflow,
    receipt,
    consent: workflow.consents.find((c) => receiptHash(c) === receipt.consent_hash),
    // The later of the event's and the receipt's times: a hand-made admission may set either.
    when: Math.max(Date.parse(at), Date.parse(receipt.at)),
    uses,
    distrustStopLift: (r) => {
      const v = judgeReceiptTrust(r, RECEIPT_KINDS.stop_resolution.right, config);
      return v.ok ? undefined : v.reason;
    },
  };
  return ADMISSION_CHECKS.flatMap((c) => (typeof c.rejudge === "function" ? c.rejudge(recorded) : []));
}
