import path from "node:path";
import { readExportedTrust } from "../../ci/exported-trust.js";
import { UsageError } from "../../errors/errors.js";
import { loadPinnedPolicy } from "../../home/suite-pins.js";
import { type LoadedRun, readRunFile } from "../../store/run-file.js";
import type { SuiteConfig } from "../../suite/suite-config.js";
import { judgeReceiptTrust, type Right } from "../../trust/judge-receipt-trust.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/**
 * `twinlock verify-receipts RUN`: check every receipt offline against the
 * reviewers of the pinned suite: a run file of the gate home; a run of a
 * team store (`--store`), judged by the store's pins and enrolled passkeys;
 * or, with `--exported`, an export's run.json judged by the trust file the
 * export wrote beside it (no home, no database).
 */
export async function runVerifyReceipts(runRef: string, o: CommonOptions & { exported?: boolean }): Promise<CommandResult> {
  const { run, config, source, unsigned } = await receiptsAndTrust(runRef, o);
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
    `${rows.length} receipts, ${bad} untrusted${config.policies?.require_signed_receipts ? " (signed receipts required)" : ""}; trust from ${source}`,
    ...(unsigned ? ["UNSIGNED: receipts prove nothing about who decided"] : []),
  ].join("\n");
  return { exitCode: bad > 0 ? 1 : 0, text, json: { ok: bad === 0, receipts: rows } };
}

/** The run (verified) and the trust its receipts are judged by, wherever the run is. */
async function receiptsAndTrust(
  runRef: string,
  o: CommonOptions & { exported?: boolean },
): Promise<{ run: LoadedRun; config: SuiteConfig; source: string; unsigned: boolean }> {
  if (o.exported) {
    // readRunFile verifies the chain and the replay; there is no checkpoint to set it against offline.
    const run = readRunFile(path.resolve(runRef));
    const { trust, config, file } = readExportedTrust(runRef);
    if (trust.suite_id !== run.state.suite.suite_id)
      throw new UsageError(
        `${file} is the trust of suite ${trust.suite_id}, but the run is of ${run.state.suite.suite_id}; export the run again`,
      );
    return {
      run,
      config,
      source: `${file} (pin of ${trust.suite_id}, exported from ${trust.exported_from} at ${trust.exported_at})`,
      unsigned: config.policies?.require_signed_receipts !== true,
    };
  }
  const store = storeOption(o);
  const run = await store.read(runRef);
  const pinned = loadPinnedPolicy(store.home, run.state.suite);
  await store.close();
  return { run, config: pinned.config, source: `the pin of ${pinned.pin.suite_id} in ${store.label}`, unsigned: pinned.unsigned };
}
