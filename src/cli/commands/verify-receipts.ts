import { readRunFile } from "../../store/run-store.js";
import { judgeReceiptTrust, type Right } from "../../trust/judge-receipt-trust.js";
import { loadPolicyConfig } from "../../trust/load-policy-config.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

/** `twinlock verify-receipts RUN`: check every receipt offline against the suite's reviewers. */
export function runVerifyReceipts(runFile: string, _o: CommonOptions): CommandResult {
  const run = readRunFile(runFile);
  const config = loadPolicyConfig(run.state.suite);
  const rows: Array<{
    planner: string;
    kind: string;
    revision: number;
    person: string;
    decision: string | null;
    signed: boolean;
    ok: boolean;
    detail: string;
  }> = [];
  for (const wf of Object.values(run.state.workflows)) {
    const all: Array<[Record<string, unknown> & { kind: string }, Right]> = [
      ...wf.reviews.map((r) => [r, "review"] as [typeof r, Right]),
      ...wf.consents.map((r) => [r, "consent"] as [typeof r, Right]),
      ...wf.apply_approvals.map((r) => [r, "apply"] as [typeof r, Right]),
    ];
    for (const [receipt, right] of all) {
      const v = judgeReceiptTrust(receipt, right, config);
      rows.push({
        planner: wf.planner,
        kind: receipt.kind,
        revision: receipt.revision as number,
        person: String(receipt.reviewer ?? receipt.user ?? receipt.approver),
        decision: (receipt.decision as string | undefined) ?? null,
        signed: receipt.signature !== undefined,
        ok: v.ok,
        detail: v.ok ? (v.signer ? `signed by ${v.signer}` : "unsigned (allowed by policy)") : v.reason,
      });
    }
  }
  const bad = rows.filter((r) => !r.ok).length;
  const text = [
    ...rows.map(
      (r) =>
        `${r.ok ? "ok  " : "FAIL"}  ${r.planner} rev ${r.revision} ${r.kind}${r.decision ? ` ${r.decision}` : ""} by ${r.person}: ${r.detail}`,
    ),
    `${rows.length} receipts, ${bad} untrusted${config.policies?.require_signed_receipts ? " (signed receipts required)" : ""}`,
  ].join("\n");
  return { exitCode: bad > 0 ? 1 : 0, text, json: { ok: bad === 0, receipts: rows } };
}
