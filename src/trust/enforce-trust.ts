import { RefusalError } from "../errors/errors.js";
import type { ReviewReceipt, Workflow } from "../run/run-schema.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { judgeReceiptTrust, type Right } from "./judge-receipt-trust.js";

/** Refuse a receipt the suite's reviewers and policy do not trust, naming why. */
export function requireTrustedReceipt(receipt: Parameters<typeof judgeReceiptTrust>[0], right: Right, config: SuiteConfig): void {
  const verdict = judgeReceiptTrust(receipt, right, config);
  if (!verdict.ok) throw new RefusalError(`refused: ${verdict.reason}`, { attack: "untrusted-receipt" });
}

/** Under `separate_duties`, the actor who froze the handoff may not review or consent to it. */
export function requireSeparateDuties(wf: Workflow, person: string, config: SuiteConfig, what: string): void {
  if (config.policies?.separate_duties !== true) return;
  if (wf.handoff && wf.handoff.frozen_by === person) {
    throw new RefusalError(
      `refused: separate duties — ${person} froze revision ${wf.handoff.revision} and may not ${what} it; another reviewer must`,
      { attack: "separate-duties" },
    );
  }
}

/**
 * The identity that makes approvals distinct: the reviewer's name. A trusted
 * signed receipt carries its key owner's name, so one person with one key
 * and a second, unsigned approval under the same name still counts once.
 */
export function approverIdentity(r: ReviewReceipt): string {
  return `name:${r.reviewer}`;
}

/** Distinct approvers of the workflow's current revision, each counted once however often they approved. */
export function distinctApprovers(wf: Workflow, config: SuiteConfig): string[] {
  const rev = wf.handoff?.revision;
  const ids = new Set<string>();
  for (const r of wf.reviews) {
    if (r.revision !== rev || r.decision !== "approved") continue;
    if (!judgeReceiptTrust(r, "review", config).ok) continue;
    ids.add(approverIdentity(r));
  }
  return [...ids];
}
