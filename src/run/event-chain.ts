import { hashCanonical } from "../crypto/canonical-hash.js";
import type { RunEvent } from "./run-schema.js";

/** `prev` of the first event. */
export const GENESIS = `sha256:${"0".repeat(64)}`;

/** The hash of one event: sha256 of its RFC 8785 canonical form. */
export function hashEvent(event: RunEvent): string {
  return hashCanonical(event);
}

/** Where a chain first breaks, or ok. */
export type ChainVerdict = { ok: true; head: string } | { ok: false; seq: number; reason: string };

/**
 * Check the hash chain: seq counts 1, 2, 3…; every `prev` is the hash of the
 * event before (GENESIS for the first); and `head` is the hash of the last.
 * An edited, deleted, inserted or reordered event breaks it at that event.
 */
export function verifyChain(events: readonly RunEvent[], head: string): ChainVerdict {
  let prev = GENESIS;
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as RunEvent;
    if (e.seq !== i + 1)
      return { ok: false, seq: i + 1, reason: `event at position ${i + 1} has seq ${e.seq}: an event was deleted, inserted or moved` };
    if (e.prev !== prev)
      return {
        ok: false,
        seq: e.seq,
        reason: `event ${e.seq}'s prev does not match the hash of event ${e.seq - 1}: an earlier event was edited, or this one was moved`,
      };
    prev = hashEvent(e);
  }
  if (prev !== head) {
    const last = events.length;
    return {
      ok: false,
      seq: last,
      reason: `the run's head does not match the hash of event ${last}: the last event was edited or events were removed from the end`,
    };
  }
  return { ok: true, head: prev };
}
