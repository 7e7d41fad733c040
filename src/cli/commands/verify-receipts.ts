import { existsSync } from "node:fs";
import path from "node:path";
import { readExportedTrust } from "../../ci/read-exported-trust.js";
import { UsageError } from "../../errors/errors.js";
import { loadPinnedPolicy } from "../../home/suite-pins.js";
import { type LoadedRun, readRunFile } from "../../store/run-file.js";
import type { SuiteConfig } from "../../suite/suite-config.js";
import { requireGateSigned, trustedGateKeys } from "../../trust/gate-statement.js";
import { judgeRunReceipts } from "../../trust/judge-run-receipts.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/**
 * `twinlock verify-receipts RUN`: check every receipt offline against the
 * reviewers of the pinned suite: a run file of the gate home; a run of a
 * team store (`--store`), judged by the store's pins and enrolled passkeys;
 * or, with `--exported`, an export's run.json judged by `--trust FILE`, a
 * trust.json the person trusts (no home, no database).
 */
export async function runVerifyReceipts(
  runRef: string,
  o: CommonOptions & { exported?: boolean; trust?: string; pinnerKey?: string },
): Promise<CommandResult> {
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
  o: CommonOptions & { exported?: boolean; trust?: string; pinnerKey?: string },
): Promise<{ run: LoadedRun; config: SuiteConfig; source: string; unsigned: boolean }> {
  if (o.exported) {
    if (o.trust === undefined)
      throw new UsageError(
        "give --trust FILE with --exported: the trust.json of an export you made yourself (twinlock export RUN --out DIR), or one your team keeps where the agent cannot write — the one that came with this export proves nothing, whoever could write the export could write it",
      );
    // readRunFile verifies the chain and the replay; there is no checkpoint to set it against offline.
    if (!existsSync(path.resolve(runRef)))
      throw new UsageError(`${runRef} does not exist; give the run.json of an export (twinlock export RUN --out DIR)`);
    const run = readRunFile(path.resolve(runRef));
    const { trust, config, file } = readExportedTrust(o.trust, o.pinnerKey);
    if (trust.suite_id !== run.state.suite.suite_id)
      throw new UsageError(
        `${file} is the trust of suite ${trust.suite_id}, but the run is of ${run.state.suite.suite_id}; give that suite's trust file`,
      );
    requireGateSigned(run.file, trustedGateKeys(config), `verify-receipts refused (gate signature; trusted: the gate_keys of ${file})`);
    return {
      run,
      config,
      source: `${file} (by its own account: the pin of ${trust.suite_id} in ${trust.exported_from} at ${trust.exported_at})`,
      unsigned: config.policies?.require_signed_receipts !== true,
    };
  }
  const store = storeOption(o);
  const run = await store.read(runRef);
  const pinned = loadPinnedPolicy(store.home, run.state.suite);
  await store.close();
  return { run, config: pinned.config, source: `the pin of ${pinned.pin.suite_id} in ${store.label}`, unsigned: pinned.unsigned };
}
