import { existsSync } from "node:fs";
import path from "node:path";
import { IntegrityError, RefusalError, UsageError } from "../../errors/errors.js";
import { MAX_HANDOFF_BYTES, type ManifestEntry } from "../../handoff/hash-handoff.js";
import { homeLabel } from "../../home/gate-home.js";
import { loadPinnedPolicy } from "../../home/suite-pins.js";
import { requireTrustedGateSignatures } from "../../home/trusted-gate-keys.js";
import { readFailureCode, readRegularFile } from "../../input/read-regular-file.js";
import type { RunFile } from "../../run/run-schema.js";
import { readRunFileUnverified, verifyRunFile } from "../../store/run-file.js";
import { frozenFilesOf, type RunStore } from "../../store/run-store.js";
import { judgeRunReceipts } from "../../trust/judge-run-receipts.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption, usesTeamStore } from "../home-option.js";

/**
 * `twinlock import DIR [--as NAME]`: the counterpart of `export --out DIR`.
 * The run is verified before anything is written (chain and replay), every
 * decision in it must be signed by a reviewer the store trusts (its pin of
 * the run's suite, with its enrolled passkeys: an export is only integrity,
 * anyone can write one), every frozen file is checked against its sha256 as
 * it is kept, and the store refuses a run it already holds. Into a team store (`--store`) it goes under
 * its run ID (or `--as NAME`); into the gate home only as the restore of a
 * run created there, at `--as FILE`.
 */
export async function runImport(dir: string, o: CommonOptions & { as?: string; acceptUnsigned?: boolean }): Promise<CommandResult> {
  const folder = path.resolve(dir);
  const runJson = path.join(folder, "run.json");
  if (!existsSync(runJson)) throw new UsageError(`${dir} holds no run.json; give the folder \`twinlock export RUN --out DIR\` wrote`);
  const file = readRunFileUnverified(runJson);
  const store = storeOption(o);
  const ref = o.as ?? (usesTeamStore(o) ? file.state.run_id : undefined);
  if (ref === undefined)
    throw new UsageError(
      `give --as FILE: the run file to restore ${file.state.run_id} at (the gate home's folder store keeps runs as files)`,
    );
  const frozen = (entry: ManifestEntry): Buffer => {
    try {
      return readRegularFile(path.join(folder, "frozen", entry.sha256), "frozen file", { noFollow: true, maxBytes: MAX_HANDOFF_BYTES });
    } catch (error) {
      if (readFailureCode(error) === "ENOENT")
        throw new IntegrityError(
          `${dir}/frozen/${entry.sha256} (${entry.path}) is missing; export the run again with --out, which writes every frozen file`,
        );
      throw error;
    }
  };
  await requireTrustedDecisions(store, file, o.acceptUnsigned === true);
  const run = await store.importRun(ref, file, frozen);
  await store.close();
  const files = new Set(frozenFilesOf(run.file.events).map((f) => f.sha256));
  return {
    exitCode: 0,
    text: `imported run ${run.state.run_id} (${run.file.revision} events, ${files.size} frozen files) into ${store.label}${ref === run.state.run_id ? "" : ` as ${ref}`}`,
    json: { ok: true, run_id: run.state.run_id, events: run.file.revision, frozen_files: files.size, ref: run.path },
  };
}

/**
 * Refuse a run whose decisions the destination store would not have taken:
 * every receipt is judged against the store's pin of the run's suite (as
 * `verify-receipts` judges it). A suite pinned with --allow-unsigned has
 * receipts that prove nothing about who decided, so its runs come in only
 * with --accept-unsigned.
 */
async function requireTrustedDecisions(store: RunStore, file: RunFile, acceptUnsigned: boolean): Promise<void> {
  const verdict = verifyRunFile(file);
  if (!verdict.ok) throw new IntegrityError(`the run to import does not verify: ${verdict.reason}`, { seq: verdict.seq });
  await store.home.shared?.refresh();
  const pinned = loadPinnedPolicy(store.home, file.state.suite);
  const where = `the pin of ${pinned.pin.suite_id} in ${homeLabel(store.home)}`;
  // The gate's own records and the exported head must be a trusted gate's: an export rebuilt from genuine receipts is not.
  await requireTrustedGateSignatures(store.home, file);
  if (pinned.unsigned && !acceptUnsigned)
    throw new RefusalError(
      `run ${file.state.run_id} is of ${pinned.pin.suite_id}, pinned with --allow-unsigned in ${homeLabel(store.home)}: its receipts prove nothing about who decided, so nothing shows its approvals were a person's; pass --accept-unsigned to import it knowingly`,
      { attack: "unsigned-import" },
    );
  const bad = judgeRunReceipts({ file, state: verdict.state }, pinned.config).filter((r) => !r.ok);
  if (bad.length > 0)
    throw new RefusalError(
      `run ${file.state.run_id} holds ${bad.length} decision${bad.length === 1 ? "" : "s"} that ${where} does not trust (${bad
        .slice(0, 3)
        .map((r) => `${r.planner} rev ${r.revision} ${r.kind} by ${r.person}: ${r.detail}`)
        .join("; ")}); an import takes only decisions signed by reviewers this store trusts`,
      { attack: "untrusted-import" },
    );
}
