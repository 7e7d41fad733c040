import { describe, expect, it } from "vitest";
import { makeNextStep, nextStepData, describeNextStep as stepFor } from "../run/next-step.js";
import { STATES } from "../run/transition-table.js";
import { describeNextStep } from "./describe-next-step.js";

const fill = { run: "/tmp/run.json", planner: "MD-29", executor: "MD-30", hash: `sha256:${"a".repeat(64)}` };

describe("describeNextStep", () => {
  it("asks the reviewer to review MD-29's frozen plan when a review is pending", () => {
    expect(describeNextStep(nextStepData(stepFor("plan_review_pending", fill)))).toBe(
      "Review the frozen plan of MD-29: request changes, approve it or decline it.",
    );
  });

  it("says MD-30 waits for admission when the pair is ready", () => {
    expect(describeNextStep(nextStepData(stepFor("dry_run_ready", fill)))).toBe(
      "Waiting for MD-30 to be started through the gate and admitted: every admission check must pass.",
    );
  });

  it("says a closed workflow is over", () => {
    expect(describeNextStep(nextStepData(stepFor("closed", fill)))).toBe("Nothing more to do: this workflow is over.");
  });

  it("words every state's step as a sentence, never as a command line, a flag or the run file's path", () => {
    for (const state of STATES) {
      const text = describeNextStep(nextStepData(stepFor(state, fill)));
      expect(text).toMatch(/^[A-Z].*[.?]$/);
      expect(text).not.toMatch(/twinlock |--|run\.json|sha256/);
    }
  });

  it("words the dry run a suite may require first", () => {
    expect(describeNextStep(nextStepData(makeNextStep("dry-run first", "dry-run", ["/tmp/run.json", "MD-30"])))).toBe(
      "Waiting for a dry run of MD-30: it must pass before it is admitted in an apply mode.",
    );
  });

  it("names an operation it does not know as it is, and no prototype key is taken for one", () => {
    expect(describeNextStep({ operation: "constructor", args: ["r", "MD-29"], options: [], choice: [] })).toBe(
      "Next: constructor for MD-29.",
    );
  });
});
