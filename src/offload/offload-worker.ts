import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { OFFLOAD_TASKS, type OffloadTasks } from "./offload-tasks.js";
import { carry } from "./run-off-thread.js";

/**
 * A worker thread's side of `runOffThread`: each message names a task and
 * its input; the answer (or the error, carried) goes back with its ID.
 * Loading this module in any other thread does nothing.
 */
if (!isMainThread && parentPort && (workerData as { twinlockOffload?: boolean } | undefined)?.twinlockOffload) {
  const port = parentPort;
  port.on("message", async (message: { id: number; task: keyof OffloadTasks; input: never }) => {
    try {
      if (!Object.hasOwn(OFFLOAD_TASKS, message.task)) throw new Error(`no offloaded task ${String(message.task)}`);
      const run = OFFLOAD_TASKS[message.task] as (input: unknown) => unknown;
      port.postMessage({ id: message.id, ok: true, value: await run(message.input) });
    } catch (error) {
      port.postMessage({ id: message.id, ok: false, error: carry(error) });
    }
  });
}
