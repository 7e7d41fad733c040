import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { closestChoice, editDistance } from "./closest-choice.js";

describe("closestChoice", () => {
  it("suggests the choice a typo most likely meant, and nothing for a word far from every choice", () => {
    expect(closestChoice("aproved", ["changes_requested", "approved", "declined"])).toBe("approved");
    expect(closestChoice("APPROVED", ["approved"])).toBe("approved");
    expect(closestChoice("yes", ["changes_requested", "approved", "declined"])).toBeUndefined();
  });

  it("counts two neighbouring letters swapped as one edit, and is a distance (zero only for equal words, symmetric)", () => {
    expect(editDistance("requried", "required")).toBe(1);
    expect(editDistance("apporved", "approved")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        expect(editDistance(a, b)).toBe(editDistance(b, a));
        expect(editDistance(a, b) === 0).toBe(a === b);
        expect(editDistance(a, b)).toBeLessThanOrEqual(Math.max(a.length, b.length));
      }),
    );
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
