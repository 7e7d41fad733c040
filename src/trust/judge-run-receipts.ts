import { heldReceipts, RECEIPT_ROWS } from "../run/receipt-kinds.js";
import type { RunFile, RunState } from "../run/run-schema.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { judgeReceiptTrust, type Right, receiptPerson } from "./judge-receipt-trust.js";

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

type Receipt = Record<string, unknown> & { kind: string };

/**
 * Every receipt a run holds — freezes, reviews, consents, apply approvals,
 * passed dry runs, lifted stops — judged offline against `config` (the
 * pinned suite's reviewers with a store's enrolled passkeys, or an export's
 * trust): signature, key, right and revocation, the right from RECEIPT_KINDS.
 */
export function judgeRunReceipts(run: { file: RunFile; state: RunState }, config: SuiteConfig): JudgedReceipt[] {
  const rows: JudgedReceipt[] = [];
  const held = heldReceipts(run.state);
  const judged = (receipt: Receipt, right: Right) => {
    const v = judgeReceiptTrust(receipt, right, config);
    return {
      signed: receipt.signature !== undefined,
      ok: v.ok,
      detail: v.ok ? (v.signer ? `signed by ${v.signer}` : "unsigned (allowed by policy)") : v.reason,
    };
  };
  for (const wf of Object.values(run.state.workflows)) {
    const all: Array<[Receipt, Right]> = [];
    for (const row of RECEIPT_ROWS) {
      const source = row.judged;
      if (row.right === null || (source !== "chain" && source !== "workflow")) continue;
      const right = row.right;
      const receipts =
        source === "chain"
          ? run.file.events
              .filter((e) => row.events.includes(e.type) && (e.data as { planner?: string }).planner === wf.planner)
              .map((e) => (e.data as { receipt: Receipt }).receipt)
          : held.filter((h) => h.row.kind === row.kind && h.planner === wf.planner).map((h) => h.receipt);
      all.push(...receipts.map((r) => [r, right] as [Receipt, Right]));
    }
    for (const [receipt, right] of all) {
      rows.push({
        planner: wf.planner,
        kind: receipt.kind,
        revision: receipt.revision as number,
        person: receiptPerson(receipt),
        decision: (receipt.decision as string | undefined) ?? (receipt.result as string | undefined) ?? null,
        ...judged(receipt, right),
      });
    }
  }
  for (const row of RECEIPT_ROWS) {
    if (row.judged !== "run" || row.right === null) continue;
    for (const h of held.filter((x) => x.row.kind === row.kind)) {
      rows.push({
        planner: h.planner ?? "run",
        kind: h.receipt.kind,
        revision: 0,
        person: receiptPerson(h.receipt),
        decision: `!STOP:${String(h.receipt.reason)} lifted`,
        ...judged(h.receipt, row.right),
      });
    }
  }
  return rows;
}
