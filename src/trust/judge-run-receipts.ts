import type { LoadedRun } from "../store/run-file.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { judgeReceiptTrust, type Right } from "./judge-receipt-trust.js";

/** One receipt of a run as judged against a trust config. */
export interface JudgedReceipt {
  planner: string;
  kind: string;
  revision: number;
  person: string;
  decision: string | null;
  signed: boolean;
  ok: boolean;
  detail: string;
}

/**
 * Every receipt a run holds — freezes, reviews, consents, apply approvals,
 * passed dry runs, lifted stops — judged offline against `config` (the
 * pinned suite's reviewers with a store's enrolled passkeys, or an export's
 * trust): signature, key, right and revocation.
 */
export function judgeRunReceipts(run: LoadedRun, config: SuiteConfig): JudgedReceipt[] {
  const rows: JudgedReceipt[] = [];
  for (const wf of Object.values(run.state.workflows)) {
    const freezes = run.file.events
      .filter((e) => e.type === "handoff_frozen" && (e.data as { planner: string }).planner === wf.planner)
      .map(
        (e) =>
          [(e.data as { receipt: Record<string, unknown> & { kind: string } }).receipt, "freeze"] as [
            Record<string, unknown> & { kind: string },
            Right,
          ],
      );
    const all: Array<[Record<string, unknown> & { kind: string }, Right]> = [
      ...freezes,
      ...wf.reviews.map((r) => [r, "review"] as [typeof r, Right]),
      ...wf.consents.map((r) => [r, "consent"] as [typeof r, Right]),
      ...wf.apply_approvals.map((r) => [r, "apply"] as [typeof r, Right]),
      // A passed dry run is a person's decision that admission relies on, signed with the apply right.
      ...wf.dry_runs.flatMap((d) => (d.result_receipt ? [[d.result_receipt, "apply"] as [typeof d.result_receipt, Right]] : [])),
    ];
    for (const [receipt, right] of all) {
      const v = judgeReceiptTrust(receipt, right, config);
      rows.push({
        planner: wf.planner,
        kind: receipt.kind,
        revision: receipt.revision as number,
        person: String(receipt.reviewer ?? receipt.user ?? receipt.approver ?? receipt.by),
        decision: (receipt.decision as string | undefined) ?? (receipt.result as string | undefined) ?? null,
        signed: receipt.signature !== undefined,
        ok: v.ok,
        detail: v.ok ? (v.signer ? `signed by ${v.signer}` : "unsigned (allowed by policy)") : v.reason,
      });
    }
  }
  for (const stop of run.state.stops) {
    if (!stop.resolution_receipt) continue;
    const v = judgeReceiptTrust(stop.resolution_receipt, "stop", config);
    rows.push({
      planner: stop.workflow ?? "run",
      kind: "stop_resolution",
      revision: 0,
      person: stop.resolution_receipt.by,
      decision: `!STOP:${stop.reason} lifted`,
      signed: stop.resolution_receipt.signature !== undefined,
      ok: v.ok,
      detail: v.ok ? (v.signer ? `signed by ${v.signer}` : "unsigned (allowed by policy)") : v.reason,
    });
  }
  return rows;
}
