import { closeSync, constants, openSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { RUN_ID_PATTERN } from "../run/run-schema.js";
import { fsyncDir } from "../store/atomic-write.js";
import { type GateHome, homeSubdir, listHomeSubdir } from "./gate-home.js";

/** The file that says the index holds every run with a waiting delivery (written once, after the first full scan). */
const COMPLETE = ".complete";

/**
 * The gate home outbox's pending index (`notify/pending/`): one empty file
 * per run whose outbox holds a delivery still to try, so a look at what is
 * due reads those runs only, not every run the home ever notified of.
 *
 * Its one invariant, kept across a kill at any point: a run with a waiting
 * delivery has its mark. A writer marks a run (durably: the folder is
 * fsynced) before the outbox file that adds its deliveries is renamed into
 * place, and unmarks it only after the file with none left is; a kill in
 * between leaves a mark over nothing, which `due` finds and removes. A home
 * whose outbox predates the index is scanned once (`build`), and the index
 * is used only once the scan is marked complete.
 */
export interface OutboxPendingIndex {
  /** Mark `runId` as having a waiting delivery; durable before it returns. */
  mark(runId: string): void;
  /** Remove the mark (a lost unmark only leaves a mark over nothing). */
  unmark(runId: string): void;
  /** The runs marked, or undefined while the index is not complete (the caller scans every run's outbox, and builds it). */
  marked(): string[] | undefined;
  /** Mark each of `pendingRunIds` (found by a scan of every run's outbox), then record that the index is complete. */
  build(pendingRunIds: readonly string[]): void;
}

/** The pending index of `home`'s outbox. */
export function outboxPendingIndex(home: GateHome): OutboxPendingIndex {
  // Read without making the folder: a home without an outbox has nothing waiting.
  const readDir = path.join(home.dir, "notify", "pending");
  const dir = () => homeSubdir(home, "notify", "pending");
  let complete = false;
  const isComplete = () => {
    complete ||= statSync(path.join(readDir, COMPLETE), { throwIfNoEntry: false })?.isFile() === true;
    return complete;
  };
  const mark = (runId: string) => {
    if (!RUN_ID_PATTERN.test(runId)) return;
    const file = path.join(dir(), runId);
    if (statSync(file, { throwIfNoEntry: false }) !== undefined) return;
    createEmpty(file);
    // The mark outlives power loss before the outbox file it stands for is renamed into place.
    fsyncDir(path.dirname(file));
  };
  return {
    mark,
    unmark(runId) {
      if (!RUN_ID_PATTERN.test(runId)) return;
      try {
        unlinkSync(path.join(readDir, runId));
      } catch {
        // Not marked, or the home is gone: nothing to remove.
      }
    },
    marked: () => (isComplete() ? listHomeSubdir(home, path.join("notify", "pending")).filter((n) => RUN_ID_PATTERN.test(n)) : undefined),
    build(pendingRunIds) {
      for (const runId of pendingRunIds) mark(runId);
      const flag = path.join(dir(), COMPLETE);
      if (statSync(flag, { throwIfNoEntry: false }) === undefined) createEmpty(flag);
      fsyncDir(path.dirname(flag));
      complete = true;
    },
  };
}

function createEmpty(file: string): void {
  try {
    closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600));
  } catch (error) {
    // Made by another writer a moment ago.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}
