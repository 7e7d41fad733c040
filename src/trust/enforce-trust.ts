import { RefusalError } from "../errors/errors.js";
import { RECEIPT_KINDS } from "../run/receipt-kinds.js";
import type { ReviewReceipt, Workflow } from "../run/run-schema.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { judgeReceiptTrust, type Right, receiptPerson, type TrustVerdict } from "./judge-receipt-trust.js";

/** What a refused receipt's caller says instead of the verdict's reason, for the verdicts it knows the remedy of. */
export type TrustRemedy = (verdict: Extract<TrustVerdict, { ok: false }>) => string | undefined;

/** Refuse a receipt the suite's reviewers and policy do not trust, naming why (in the caller's words, when it has them). */
export function requireTrustedReceipt(
  receipt: Parameters<typeof judgeReceiptTrust>[0],
  right: Right,
  config: SuiteConfig,
  remedy?: TrustRemedy,
): void {
  const verdict = judgeReceiptTrust(receipt, right, config);
  if (!verdict.ok)
    throw new RefusalError(
      `refused: ${remedy?.(verdict) ?? verdict.reason}`,
      { attack: "untrusted-receipt" },
      { code: "UNTRUSTED_RECEIPT" },
    );
}

/**
 * The identity that decided a receipt, under the pinned policy: a listed
 * reviewer's key stands for that reviewer (so the same person signed and
 * unsigned counts once); an unlisted key stands for itself; an unsigned
 * receipt has only its self-declared name (unsigned suites only).
 * Separation of duties and distinct approvals compare these.
 */
export function deciderIdentity(receipt: { signature?: { public_key: string } } & Record<string, unknown>, config: SuiteConfig): string {
  const key = receipt.signature?.public_key;
  if (key === undefined) return `reviewer:${receiptPerson(receipt as { kind: string })}`;
  const listed = (config.reviewers ?? []).find((r) => r.public_key === key);
  return listed ? `reviewer:${listed.name}` : `key:${key}`;
}

/** Under `separate_duties`, the identity that froze the handoff may not review or consent to it. */
export function requireSeparateDuties(
  wf: Workflow,
  receipt: { signature?: { public_key: string } } & Record<string, unknown>,
  config: SuiteConfig,
  what: string,
): void {
  if (config.policies?.separate_duties !== true || !wf.handoff) return;
  if (deciderIdentity(wf.handoff.receipt, config) === deciderIdentity(receipt, config)) {
    throw new RefusalError(
      `refused: separate duties — ${receiptPerson(receipt as { kind: string })} froze revision ${wf.handoff.revision} (${receipt.signature ? "the same key" : "the same name"}) and may not ${what} it; another reviewer must`,
      { attack: "separate-duties" },
      { code: "SEPARATE_DUTIES" },
    );
  }
}

/**
 * The identity that makes approvals distinct: the signing key on signed
 * receipts (a trusted key belongs to one listed reviewer), else the name.
 */
export function approverIdentity(r: ReviewReceipt, config: SuiteConfig): string {
  return deciderIdentity(r as ReviewReceipt & Record<string, unknown>, config);
}

/** Distinct approvers of the workflow's current revision, each counted once however often they approved. */
export function distinctApprovers(wf: Workflow, config: SuiteConfig): string[] {
  const rev = wf.handoff?.revision;
  const ids = new Set<string>();
  for (const r of wf.reviews) {
    if (r.revision !== rev || r.decision !== "approved") continue;
    if (!judgeReceiptTrust(r, RECEIPT_KINDS.review.right, config).ok) continue;
    ids.add(approverIdentity(r, config));
  }
  return [...ids];
}
