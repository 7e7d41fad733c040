import { describe, expect, it } from "vitest";
import { describeNextStep, makeNextStep, NEXT_STEP, withKeyOption } from "./next-step.js";
import { STATES } from "./transition-table.js";

const fill = { run: "runs/my run.json", planner: "MD-29", executor: "MD-30", hash: `sha256:${"a".repeat(64)}` };

describe("the next step, as data and as a command line", () => {
  it("gives the operation, its filled arguments and options, and the command a person types", () => {
    expect(describeNextStep("plan_review_pending", fill)).toEqual({
      action: "review the frozen plan: request changes, approve or decline",
      operation: "review-pair-plan",
      args: ["runs/my run.json", "MD-29"],
      options: [
        ["--decision", "changes_requested|approved|declined"],
        ["--handoff-hash", fill.hash],
      ],
      choice: [],
      command: `twinlock review-pair-plan 'runs/my run.json' MD-29 --decision changes_requested|approved|declined --handoff-hash ${fill.hash}`,
    });
  });

  it("puts a choice of flags before the options, and adds a key the same way for every step", () => {
    const consent = describeNextStep("execution_consent_pending", fill);
    expect(consent.command).toBe(
      `twinlock consent-pair-execution 'runs/my run.json' MD-29 --approve|--decline --handoff-hash ${fill.hash}`,
    );
    expect(withKeyOption(consent).command).toBe(`${consent.command} --key FILE`);
    expect(withKeyOption(consent).options.at(-1)).toEqual(["--key", "FILE"]);
    expect(makeNextStep("dry-run first", "dry-run", ["r.json", "MD-30"], [["--checkout", "DIR"]]).command).toBe(
      "twinlock dry-run r.json MD-30 --checkout DIR",
    );
  });

  it("names an operation for every state a workflow can still move from, and none for the ended ones", () => {
    for (const state of STATES) {
      const step = describeNextStep(state, fill);
      if (state === "closed" || state === "failed") expect(step).toMatchObject({ operation: null, command: "" });
      else expect(step.command.startsWith(`twinlock ${NEXT_STEP[state].operation} `)).toBe(true);
    }
  });
});
