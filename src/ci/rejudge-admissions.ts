import { liftsNotNamingTheirStop } from "../run/admission-checks.js";
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
 * events before it replay to, as admission judged it (SPEC §5): no stop open
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

/** What does not hold of one admission, judged on the state just before it. */
function judgeOne(state: RunState, planner: string, receipt: AdmissionReceipt, at: string, uses: number, config: SuiteConfig): string[] {
  const wf = state.workflows[planner];
  if (!wf) return [`planner ${planner} is not in the run`];
  const mine = state.stops.filter((s) => s.workflow === null || s.workflow === planner);
  const open = mine.filter((s) => s.resolved_at === null).map((s) => `!STOP:${s.reason} was unresolved at the admission`);
  const untrusted = mine
    .filter((s) => s.resolved_at !== null)
    .flatMap((s) => {
      if (!s.resolution_receipt) return [`!STOP:${s.reason} was lifted without a resolution receipt`];
      const v = judgeReceiptTrust(s.resolution_receipt, RECEIPT_KINDS.stop_resolution.right, config);
      return v.ok ? [] : [`!STOP:${s.reason} was lifted without a trusted signature (${v.reason})`];
    });
  const consent = wf.consents.find((c) => receiptHash(c) === receipt.consent_hash);
  const approved = consent
    ? wf.reviews.find((r) => r.decision === "approved" && r.handoff_hash === consent.handoff_hash && r.revision === consent.revision)
    : undefined;
  // The later of the event's and the receipt's times: a hand-made admission may set either.
  const when = Math.max(Date.parse(at), Date.parse(receipt.at));
  return [
    ...open,
    ...untrusted,
    ...liftsNotNamingTheirStop(state, planner).map(
      (s) => `!STOP:${s.reason} (stop ${s.seq}) was lifted by a receipt that does not name it`,
    ),
    !consent && `the consent ${receipt.consent_hash} it names is not in the run before it`,
    consent && consent.decision !== "approved" && "the consent it names was declined",
    consent && !approved && `the consent is for ${consent.handoff_hash} revision ${consent.revision}, which no approved review approved`,
    consent &&
      consent.expires_at !== null &&
      when >= Date.parse(consent.expires_at) &&
      `the consent expired at ${consent.expires_at}, before the admission at ${new Date(when).toISOString()}`,
    consent && consent.executor !== receipt.executor && `the consent names ${consent.executor}, not the admitted ${receipt.executor}`,
    consent &&
      consent.mode === "APPLY_APPROVED" &&
      !wf.apply_approvals.some((a) => a.consent_hash === receipt.consent_hash) &&
      "APPLY_APPROVED without its apply approval",
    uses > 1 && `the consent ${receipt.consent_hash} was already used by an earlier admission`,
  ].filter((p): p is string => typeof p === "string");
}
