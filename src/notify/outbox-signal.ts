import { EventEmitter } from "node:events";

/**
 * This process's bell for "the outbox has something new": a store rings it
 * after an enqueue, the deliverer and the MCP wait listen. Another
 * process's writes are found by their polling instead.
 */
const bell = new EventEmitter();
bell.setMaxListeners(0);

/** Wake whoever waits for the outbox or a run to change. */
export function ringOutbox(runId: string): void {
  bell.emit("ring", runId);
}

/** Call `listener` on every ring; returns how to stop. */
export function onOutboxRing(listener: (runId: string) => void): () => void {
  bell.on("ring", listener);
  return () => bell.off("ring", listener);
}
