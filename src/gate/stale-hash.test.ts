import { describe, expect, it } from "vitest";
import { RefusalError } from "../errors/errors.js";
import type { Workflow } from "../run/run-schema.js";
import { requireCurrentHash } from "./review-pair-plan.js";

const h = (c: string) => `sha256:${c.repeat(64)}`;
const wf = { planner: "MD-29", revision: 2, handoff: { hash: h("b") }, history: [{ revision: 1, hash: h("a") }] } as unknown as Workflow;

describe("a decision on a hash that is no longer the current one", () => {
  it("is refused with a stable code and both revisions as data, for a page to link the current one", () => {
    let error: unknown;
    try {
      requireCurrentHash(wf, h("a"), "review", "run.json");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RefusalError);
    expect((error as RefusalError).details).toEqual({
      code: "STALE_HASH",
      given: h("a"),
      current: h("b"),
      given_revision: 1,
      current_revision: 2,
    });
  });

  it("passes for the current hash, and when no hash is given", () => {
    expect(() => requireCurrentHash(wf, h("b"), "review", "run.json")).not.toThrow();
    expect(() => requireCurrentHash(wf, undefined, "review", "run.json")).not.toThrow();
  });
});
