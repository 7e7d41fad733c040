import { describe, expect, it } from "vitest";
import { revisionToCompare } from "./revision-to-compare.js";

/** The review receipts of a pair, as far as the choice reads them. */
const reviews = (...rows: Array<[reviewer: string, revision: number, decision: "changes_requested" | "approved" | "declined"]>) => ({
  reviews: rows.map(([reviewer, revision, decision]) => ({ reviewer, revision, decision })) as never,
});

describe("which revision a revision page compares with", () => {
  it("compares revision 4 with revision 2 when alice last asked to change revision 2", () => {
    const wf = reviews(["alice", 1, "changes_requested"], ["alice", 2, "changes_requested"], ["bob", 3, "changes_requested"]);
    expect(revisionToCompare(wf, 4, "alice")).toEqual({ revision: 2, yours: "changes_requested" });
  });

  it("falls back to the previous revision for a reviewer who decided on none of the earlier ones", () => {
    const wf = reviews(["alice", 1, "changes_requested"], ["alice", 2, "changes_requested"]);
    expect(revisionToCompare(wf, 3, "carol")).toEqual({ revision: 2, yours: null });
    expect(revisionToCompare(wf, 3, null)).toEqual({ revision: 2, yours: null });
  });

  it("ignores a decision on this revision or a later one: only an earlier revision is a base", () => {
    const wf = reviews(["alice", 1, "approved"], ["alice", 3, "changes_requested"]);
    expect(revisionToCompare(wf, 3, "alice")).toEqual({ revision: 1, yours: "approved" });
    expect(revisionToCompare(wf, 2, "alice")).toEqual({ revision: 1, yours: "approved" });
  });

  it("has nothing to compare revision 1 with", () => {
    expect(revisionToCompare(reviews(["alice", 1, "approved"]), 1, "alice")).toBeNull();
  });
});
