import type { RevisionPageView } from "./view-model.js";

/** The reviewer's own decision on a revision, as the clause that follows "since revision n". */
const YOURS = { changes_requested: "which you asked to change", approved: "which you approved", declined: "which you declined" } as const;

/**
 * The revision a page compares with, and how to say it: "revision 2, which
 * you asked to change" when it is the one the signed-in reviewer last decided
 * on, "revision 3" when it is merely the previous one; null for revision 1.
 */
export function describeComparedRevision(
  v: Pick<RevisionPageView, "revision" | "comparedWith">,
): { revision: number; words: string } | null {
  const c = v.comparedWith === undefined ? (v.revision > 1 ? { revision: v.revision - 1, yours: null } : null) : v.comparedWith;
  if (c === null) return null;
  return { revision: c.revision, words: c.yours === null ? `revision ${c.revision}` : `revision ${c.revision}, ${YOURS[c.yours]}` };
}
