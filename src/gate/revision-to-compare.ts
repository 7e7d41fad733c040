import type { Workflow } from "../run/run-schema.js";

/** The earlier revision a revision is compared with, and the reviewer's own decision on it when it is theirs. */
export interface ComparedRevision {
  /** The earlier revision's number. */
  revision: number;
  /** The signed-in reviewer's decision on it (their last review receipt), or null: it is merely the previous revision. */
  yours: "changes_requested" | "approved" | "declined" | null;
}

/**
 * What a reviewer looking at `revision` wants it compared with: the last
 * earlier revision they decided on themselves (their newest review receipt
 * on a revision before this one), or, when they have none, the previous
 * revision; null for revision 1, which has nothing before it. A receipt of
 * anyone else never chooses the base: what changed since *your* decision.
 */
export function revisionToCompare(wf: Pick<Workflow, "reviews">, revision: number, reviewer: string | null): ComparedRevision | null {
  if (revision <= 1) return null;
  const mine = reviewer === null ? undefined : wf.reviews.filter((r) => r.reviewer === reviewer && r.revision < revision).at(-1);
  return mine ? { revision: mine.revision, yours: mine.decision } : { revision: revision - 1, yours: null };
}
