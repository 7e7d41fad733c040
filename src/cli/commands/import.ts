import path from "node:path";
import { IntegrityError, UsageError } from "../../errors/errors.js";
import { MAX_HANDOFF_BYTES, type ManifestEntry } from "../../handoff/hash-handoff.js";
import { readFailureCode, readRegularFile } from "../../input/read-regular-file.js";
import { readRunFileUnverified } from "../../store/run-file.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption, usesTeamStore } from "../home-option.js";

/**
 * `twinlock import DIR [--as NAME]`: the counterpart of `export --out DIR`.
 * The run is verified before anything is written (chain and replay), every
 * frozen file is checked against its sha256 as it is kept, and the store
 * refuses a run it already holds. Into a team store (`--store`) it goes under
 * its run ID (or `--as NAME`); into the gate home only as the restore of a
 * run created there, at `--as FILE`.
 */
export async function runImport(dir: string, o: CommonOptions & { as?: string }): Promise<CommandResult> {
  const folder = path.resolve(dir);
  const runJson = path.join(folder, "run.json");
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
  const run = await store.importRun(ref, file, frozen);
  await store.close();
  const files = new Set(
    run.file.events.flatMap((e) => (e.type === "handoff_frozen" ? (e.data.files as ManifestEntry[]).map((f) => f.sha256) : [])),
  );
  return {
    exitCode: 0,
    text: `imported run ${run.state.run_id} (${run.file.revision} events, ${files.size} frozen files) into ${store.label}${ref === run.state.run_id ? "" : ` as ${ref}`}`,
    json: { ok: true, run_id: run.state.run_id, events: run.file.revision, frozen_files: files.size, ref: run.path },
  };
}
