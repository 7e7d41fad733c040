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

/** The first `length` events of a chain, known to hold (checked before, and unchanged since), and the hash of the last of them. */
export interface VerifiedPrefix {
  length: number;
  head: string;
}

/**
 * Check the hash chain: seq counts 1, 2, 3…; every `prev` is the hash of the
 * event before (GENESIS for the first); and `head` is the hash of the last.
 * An edited, deleted, inserted or reordered event breaks it at that event.
 * `from`: the events before it are known to hold, so checking starts after
 * them, from their head (the verdict is the one a check of every event gives).
 */
export function verifyChain(events: readonly RunEvent[], head: string, from: VerifiedPrefix = { length: 0, head: GENESIS }): ChainVerdict {
  let prev = from.head;
  for (let i = from.length; i < events.length; i++) {
    const e = events[i] as RunEvent;
    if (e.seq !== i + 1)
      return { ok: false, seq: i + 1, reason: `event at position ${i + 1} has seq ${e.seq}: an event was deleted, inserted or moved` };
    if (e.prev !== prev) {
      // Either the event before was edited or this one's prev was. If this event still hashes to
      // what its successor (or the head) recorded, it is intact, so the event before is the bad one.
      const recordedByNext = i + 1 < events.length ? (events[i + 1] as RunEvent).prev : head;
      if (i > 0 && hashEvent(e) === recordedByNext) {
        return {
          ok: false,
          seq: e.seq - 1,
          reason: `event ${e.seq - 1} was edited: its hash no longer matches the prev recorded by event ${e.seq}`,
        };
      }
      return {
        ok: false,
        seq: e.seq,
        reason: `event ${e.seq}'s prev does not match the hash of ${e.seq === 1 ? "the chain's start" : `event ${e.seq - 1}`}: it was edited or moved`,
      };
    }
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
