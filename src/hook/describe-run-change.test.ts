import { describe, expect, it } from "vitest";
import { describeRunChange } from "./describe-run-change.js";

const bound = { seq: 9, head: `sha256:${"a".repeat(64)}` };
const checkpoint = (fromSeq: number, events: unknown[]) => ({ seq: fromSeq + events.length, last_write: { from_seq: fromSeq, events } });

describe("describeRunChange", () => {
  it("names the whole change when the home's last write began where the session was bound", () => {
    const stop = { type: "stop_raised", actor: "alice", data: { reason: "halt", workflow: "MD-29", note: null } };
    expect(describeRunChange(checkpoint(9, [stop]), bound)).toBe("!STOP:halt was raised on MD-29 by alice");
  });

  it("says how many events came since, and names only the last write's, when more than one write came", () => {
    const closed = { type: "closed", actor: "bob", data: { planner: "MD-29", outcome: "failed", residual: "x" } };
    expect(describeRunChange(checkpoint(11, [closed]), bound)).toBe("3 events since, the last write: MD-29 was closed (failed) by bob");
  });

  it("answers nothing for a checkpoint it cannot read, so the caller keeps its general reason", () => {
    for (const c of [undefined, null, {}, { last_write: { events: "no" } }, 7]) expect(describeRunChange(c, bound)).toBe("");
  });

  it("cuts long recorded values, so a reason stays one short line", () => {
    const text = describeRunChange(
      checkpoint(9, [{ type: "closed", actor: "x".repeat(5000), data: { planner: "MD-29", outcome: "y" } }]),
      bound,
    );
    expect(text.length).toBeLessThan(200);
  });
});
