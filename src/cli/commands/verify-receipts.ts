import { readRun } from "../../home/run-ledger.js";
import { loadPinnedPolicy } from "../../home/suite-pins.js";
import { judgeReceiptTrust, type Right } from "../../trust/judge-receipt-trust.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { homeOption } from "../home-option.js";

/** `twinlock verify-receipts RUN`: check every receipt offline against the reviewers of the pinned suite. */
export function runVerifyReceipts(runFile: string, o: CommonOptions): CommandResult {
  const home = homeOption(o);
  const run = readRun(runFile, home);
  const pinned = loadPinnedPolicy(home, run.state.suite);
  const config = pinned.config;
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
  const bad = rows.filter((r) => !r.ok).length;
  const text = [
    ...rows.map(
      (r) =>
        `${r.ok ? "ok  " : "FAIL"}  ${r.planner} rev ${r.revision} ${r.kind}${r.decision ? ` ${r.decision}` : ""} by ${r.person}: ${r.detail}`,
    ),
    `${rows.length} receipts, ${bad} untrusted${config.policies?.require_signed_receipts ? " (signed receipts required)" : ""}; trust from the pin of ${pinned.pin.suite_id} in ${home.dir}`,
    ...(pinned.unsigned ? ["UNSIGNED: receipts prove nothing about who decided"] : []),
  ].join("\n");
  return { exitCode: bad > 0 ? 1 : 0, text, json: { ok: bad === 0, receipts: rows } };
}
