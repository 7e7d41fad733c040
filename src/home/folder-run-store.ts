import path from "node:path";
import { ringOutbox } from "../notify/outbox-signal.js";
import { RUN_ID_PATTERN } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import { readRunFileUnverified } from "../store/run-file.js";
import { resolveRunFile } from "../store/run-folder.js";
import type { RunListing, RunStore } from "../store/run-store.js";
import { findConsumedConsent } from "./consumed-consents.js";
import { folderOutbox } from "./folder-outbox.js";
import { type GateHome, listHomeSubdir } from "./gate-home.js";
import { listCheckpoints, readCheckpoint } from "./run-checkpoints.js";

import { createRun, importRunFile, readRunWaiting, updateRun } from "./run-ledger.js";

/**
 * The embedded default store (SPEC §10): each run is a run file the caller
 * names, and its checkpoint, consumed consents and frozen bytes are in the
 * gate home. The reference is the run file's path.
 */
export function folderRunStore(home: GateHome): RunStore {
  const read = (ref: string) => readRunWaiting(ref, home);
  const notifications = folderOutbox(home, { list: async () => listRuns(home), read });
  /** A decision's notifications go in after it is written; one lost to a crash here is caught up from the cursor. */
  const told = async <R extends { run: LoadedRun }>(out: R): Promise<R> => {
    await notifications.enqueue(out.run.state.run_id, out.run.file.events, out.run.state).catch(() => 0);
    ringOutbox(out.run.state.run_id);
    return out;
  };
  return {
    home,
    notifications,
    label: `gate home ${home.dir}`,
    read,
    readUnverified: async (ref) => readRunFileUnverified(resolveRunFile(ref)),
    create: async (ref, drafts, now) => (await told({ run: await createRun(ref, home, drafts, now) })).run,
    update: async (ref, decide, options) => told(await updateRun(ref, home, decide, options)),
    importRun: (ref, file, frozen) => importRunFile(ref, home, file, frozen),
    findConsumedConsent: async (hash) => findConsumedConsent(home, hash),
    resolve: async (runId) => (RUN_ID_PATTERN.test(runId) ? readCheckpoint(home, runId)?.run_file : undefined),
    runFolder: (ref) => path.dirname(resolveRunFile(ref)),
    // The home's runs folder can be listed (a home this process cannot read fails here, by name).
    ready: async () => void listHomeSubdir(home, "runs"),
    // The outbox's held-back removals are written before the store is let go (and before its home may be removed).
    close: () => notifications.flush(),
    list: async () => listRuns(home),
  };
}

function listRuns(home: GateHome): RunListing[] {
  return listCheckpoints(home)
    .filter((cp) => cp.run_file !== undefined)
    .map((cp) => ({ run_id: cp.run_id, ref: cp.run_file as string, revision: cp.seq, updated_at: cp.updated_at }))
    .sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : a.run_id.localeCompare(b.run_id)));
}
