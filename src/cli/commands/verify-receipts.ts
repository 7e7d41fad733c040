import path from "node:path";
import { readExportedTrust } from "../../ci/exported-trust.js";
import { UsageError } from "../../errors/errors.js";
import { loadPinnedPolicy } from "../../home/suite-pins.js";
import { type LoadedRun, readRunFile } from "../../store/run-file.js";
import type { SuiteConfig } from "../../suite/suite-config.js";
import { judgeRunReceipts } from "../../trust/judge-run-receipts.js";
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
  const rows = judgeRunReceipts(run, config);
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
