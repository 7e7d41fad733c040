import { describe, expect, it } from "vitest";
import { STATES } from "../run/transition-table.js";
import { stateInWords } from "./state-in-words.js";

describe("stateInWords", () => {
  it("says what dry_run_ready means after a consent: ready for a dry run or admission, not a dry run pending", () => {
    expect(stateInWords("dry_run_ready")).toBe(" (ready for a dry run or admission)");
    expect(stateInWords("approval_pending")).toBe(" (apply approval pending)");
  });

  it("adds nothing where the words only repeat the name", () => {
    for (const state of ["investigating", "handoff_frozen", "plan_review_pending", "executing", "closed"] as const)
      expect(stateInWords(state)).toBe("");
    for (const state of STATES) expect(stateInWords(state)).not.toContain("_");
  });
});
