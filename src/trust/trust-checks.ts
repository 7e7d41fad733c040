import { RECEIPT_ROWS } from "../run/receipt-kinds.js";
import type { AdmissionCheck, Workflow } from "../run/run-schema.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { deciderIdentity, distinctApprovers } from "./enforce-trust.js";
import { judgeReceiptTrust, type Right, type TrustVerdict } from "./judge-receipt-trust.js";

type Relied = Parameters<typeof judgeReceiptTrust>[0];

/**
 * The trust checks admission adds (issue 5): it re-verifies every receipt it
 * relies on against the suite's reviewers as they are now, instead of
 * trusting what was recorded. Each is reported like the other checks.
 */
export function trustChecks(wf: Workflow | undefined, config: SuiteConfig): AdmissionCheck[] {
  const handoff = wf?.handoff;
  const rev = handoff?.revision;
  const relied: Array<{ receipt: Parameters<typeof judgeReceiptTrust>[0]; right: Right }> = [];
  if (wf && handoff)
    for (const row of RECEIPT_ROWS) {
      const right = row.right;
      const pick = row.relied;
      if (right === null || pick === null) continue;
      for (const receipt of pick(wf, handoff.revision)) relied.push({ receipt: receipt as Relied, right });
    }
  const verdicts = relied.map((x) => ({ ...x, verdict: judgeReceiptTrust(x.receipt, x.right, config) }));
  const failing = (codes: string[]) =>
    verdicts
      .filter((v): v is typeof v & { verdict: Extract<TrustVerdict, { ok: false }> } => !v.verdict.ok && codes.includes(v.verdict.code))
      .map((v) => v.verdict.reason);
  const summary = (ok: boolean, fails: string[], good: string) => ({ ok, detail: ok ? good : fails.join("; ") });
  const signedCount = verdicts.filter((v) => v.receipt.signature).length;
  const required = config.policies?.require_signed_receipts === true;
  const out: AdmissionCheck[] = [];
  const sig = failing(["unsigned", "bad-signature"]);
  out.push({
    id: "T1",
    name: "receipts are signed as the policy requires and every signature verifies",
    ...summary(sig.length === 0, sig, `${signedCount} of ${verdicts.length} receipts signed${required ? " (required)" : ""}; all verify`),
  });
  const keys = failing(["unknown-key", "revoked", "name-mismatch"]);
  out.push({
    id: "T2",
    name: "every signing key is a listed reviewer's own key and not revoked",
    ...summary(
      keys.length === 0,
      keys,
      `${(config.reviewers ?? []).length} reviewers listed, ${(config.revoked ?? []).length} revoked keys`,
    ),
  });
  const rights = failing(["no-right"]);
  out.push({
    id: "T3",
    name: "each signer holds the right for the decision (freeze, review, consent, apply)",
    ...summary(rights.length === 0, rights, "rights hold"),
  });
  const needed = config.policies?.required_approvals ?? 1;
  const approvers = wf ? distinctApprovers(wf, config) : [];
  out.push({
    id: "T4",
    name: "enough distinct reviewers approved the current hash",
    ok: approvers.length >= needed,
    detail: `${approvers.length} distinct trusted approver(s) of revision ${rev ?? 0}; ${needed} required`,
  });
  if (config.policies?.separate_duties === true) {
    const freezer = handoff ? deciderIdentity(handoff.receipt, config) : undefined;
    const overlap = verdicts.filter(
      (v) =>
        v.receipt.kind !== "freeze" && freezer !== undefined && deciderIdentity(v.receipt as Record<string, unknown>, config) === freezer,
    );
    out.push({
      id: "T5",
      name: "separate duties: the key (or, unsigned, the name) that froze the handoff did not review or consent to it",
      ok: overlap.length === 0,
      detail:
        overlap.length === 0
          ? `frozen by ${handoff?.frozen_by ?? "nobody"}${handoff?.receipt.signature ? " (signed)" : ""}; decided by others`
          : `${handoff?.frozen_by} froze revision ${rev} and the same ${handoff?.receipt.signature ? "key" : "name"} decided its ${overlap.map((v) => v.receipt.kind).join(", ")}`,
    });
  }
  return out;
}
