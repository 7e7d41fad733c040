import { readdirSync } from "node:fs";
import path from "node:path";
import { RUN_ID_PATTERN } from "./session-binding.js";

/**
 * A pending stop request's file name: the machine's monotonic clock when it became visible (ns, 20 digits, so names
 * sort in the order requests became visible), or, made before that, the time it was asked for (ms, 13 digits); then a
 * random part.
 */
export const STOP_REQUEST_NAME = /^(\d{20}|\d{13})-([0-9a-f]{16})\.json$/;

/** The folder of a run's pending stop requests in the gate home at `homeDir` (`runs/RUN_ID.stops/`); the caller checks the ID. */
export function stopRequestsDirOf(homeDir: string, runId: string): string {
  return path.join(homeDir, "runs", `${runId}.stops`);
}

/**
 * Whether a person's stop of the run is pending in the gate home (recorded, not
 * yet written into the run's chain), by one listing of a small folder and
 * nothing else (node:fs only: the hook asks on every call). A folder that
 * cannot be listed, but is there, or a run ID that is not one, counts as a
 * pending stop (fail closed).
 */
export function hasPendingStop(homeDir: string, runId: string): boolean {
  if (!RUN_ID_PATTERN.test(runId)) return true;
  try {
    return readdirSync(stopRequestsDirOf(homeDir, runId)).some((name) => STOP_REQUEST_NAME.test(name));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}
