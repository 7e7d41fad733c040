import { describe, expect, it } from "vitest";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { closestChoice } from "./closest-choice.js";

describe("closestChoice", () => {
  it("suggests the choice a typo most likely meant, and nothing for a word far from every choice", () => {
    expect(closestChoice("aproved", ["changes_requested", "approved", "declined"])).toBe("approved");
    expect(closestChoice("APPROVED", ["approved"])).toBe("approved");
    expect(closestChoice("yes", ["changes_requested", "approved", "declined"])).toBeUndefined();
  });

  it("makes a mistyped review decision say what was meant, before anything is read", async () => {
    await expect(
      reviewPairPlan({
        run: "/nonexistent/run.json",
        store: folderRunStore({ dir: "/nonexistent", id: "home_0" }),
        planner: "MD-29",
        decision: "aproved",
      } as never),
    ).rejects.toThrow('--decision "aproved" is not one of changes_requested, approved, declined; did you mean approved?');
  });
});
