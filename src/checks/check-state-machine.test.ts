import { describe, expect, it } from "vitest";
import { STATES, TRANSITIONS, type Transition } from "../run/transition-table.js";
import { checkStateMachine } from "./check-state-machine.js";

const messages = (table: readonly Transition[], states: readonly string[] = STATES) =>
  checkStateMachine(table, states).map((d) => d.message);
const without = (pred: (t: Transition) => boolean) => TRANSITIONS.filter((t) => !pred(t));

describe("checkStateMachine", () => {
  it("finds nothing wrong with the runtime's own transition table", () => {
    expect(checkStateMachine()).toEqual([]);
    expect(checkStateMachine(TRANSITIONS, STATES)).toEqual([]);
  });

  it("reports each problem as STATE_MACHINE against the runtime transition table", () => {
    const [d] = checkStateMachine(without((t) => t.event === "admitted"));
    expect(d).toMatchObject({ code: "STATE_MACHINE", severity: "error", file: "(runtime transition table)", line: 1, col: 1 });
  });

  it("reports a required state missing from the state list", () => {
    expect(
      messages(
        TRANSITIONS,
        STATES.filter((s) => s !== "approval_pending"),
      ),
    ).toContain("required state approval_pending is missing");
  });

  it("reports a row that uses an unknown state", () => {
    const table = [...TRANSITIONS, { from: "dry_run_ready", event: "admitted", to: "launching" } as unknown as Transition];
    expect(messages(table).join("\n")).toContain("dry_run_ready --admitted--> launching uses an unknown state");
  });

  it("reports a table where changes cannot be requested (no review loop)", () => {
    expect(messages(without((t) => t.event === "changes_requested")).join("\n")).toContain("review loop");
  });

  it("reports a table where a revised plan cannot be re-frozen (no review loop)", () => {
    expect(messages(without((t) => t.from === "plan_revision_pending" && t.event === "handoff_frozen")).join("\n")).toContain(
      "review loop",
    );
  });

  it("reports a table where executing cannot be reached", () => {
    expect(messages(without((t) => t.event === "admitted"))).toContain("executing cannot be reached from investigating");
  });

  it("finds a path to executing that skips execution consent, and prints it", () => {
    const table: Transition[] = [...TRANSITIONS, { from: "plan_review_pending", event: "plan_approved", to: "dry_run_ready" }];
    const text = messages(table).join("\n");
    expect(text).toContain("executing is reachable without execution consent after the latest freeze");
    expect(text).toContain(
      "investigating → (handoff_frozen) handoff_frozen → (review_requested) plan_review_pending → (plan_approved) dry_run_ready → (admitted) executing",
    );
  });

  it("finds a path where a re-freeze after consent leads to executing without new consent", () => {
    const table: Transition[] = [...TRANSITIONS, { from: "handoff_frozen", event: "apply_approved", to: "dry_run_ready" }];
    expect(messages(table).join("\n")).toContain("without execution consent");
  });

  it("finds a material edit that re-freezes straight into dry_run_ready, keeping the old consent", () => {
    const table: Transition[] = [
      ...TRANSITIONS,
      { from: "dry_run_ready", event: "handoff_frozen", to: "dry_run_ready", when: "material_edit" },
    ];
    expect(messages(table).join("\n")).toContain("without execution consent");
  });

  it("accepts a table with an extra harmless row", () => {
    const table: Transition[] = [...TRANSITIONS, { from: "approval_pending", event: "consent_declined", to: "closed" }];
    expect(checkStateMachine(table)).toEqual([]);
  });

  // Only `consent_granted` out of execution_consent_pending counts as consent:
  // a declined consent that still leads on to execution must be reported.
  it("finds a path to executing through a declined consent", () => {
    const table: Transition[] = [...TRANSITIONS, { from: "execution_consent_pending", event: "consent_declined", to: "dry_run_ready" }];
    expect(messages(table).join("\n")).toContain("without execution consent");
  });
});
