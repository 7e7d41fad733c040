/**
 * `present` (and the gate server's and MCP's present with a revision) renders
 * an earlier revision from a copy of the workflow whose handoff is the latest
 * one with only its revision, hash and files replaced (src/gate/present-plan.ts
 * shownWf). Found by attack round 22: the latest freeze's `unchanged_because`,
 * frozen_at and frozen_by go with it. Revision 1, the first freeze, is shown to
 * a reviewer as "Re-frozen without changes. The planner says why: <the agent's
 * text>", and with the time of the latest freeze: neither is true of it. The
 * web page guards the note (page-views: `latest ? … : null`); the Markdown does not.
 */
import { afterAll, describe, expect, it } from "vitest";
import { presentPlan } from "../../src/gate/present-plan.js";
import { folderRunStore } from "../../src/home/folder-run-store.js";
import { openGateHome } from "../../src/home/gate-home.js";
import { runCli } from "../../src/test-support/run-cli.js";
import { initRun, makeScenario, pin, removeScenarios, step } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

const NOTE = "alice already approved this exact plan in the review call";

describe("an earlier revision presented after an unchanged re-freeze", () => {
  it("revision 1 is not shown as re-frozen, nor with the planner's reason for revision 2, nor with revision 2's freeze time", async () => {
    const s = await makeScenario();
    await pin(s);
    await initRun(s, "APPLY_SAFE");
    await step(s, ["freeze-pair-handoff", s.runFile, "MD-29", "--handoff", s.handoff, "--key", s.planner]);
    const hash = (await runCli(["hash", s.handoff])).stdout.trim();
    await step(s, [
      "review-pair-plan",
      s.runFile,
      "MD-29",
      "--decision",
      "changes_requested",
      "--feedback",
      "tighten the rollback",
      "--handoff-hash",
      hash,
      "--key",
      s.alice,
    ]);
    await new Promise((r) => setTimeout(r, 1100));
    await step(s, ["freeze-pair-handoff", s.runFile, "MD-29", "--key", s.planner, "--unchanged-because", NOTE]);
    const store = folderRunStore(openGateHome(s.home, { create: false }));
    const first = await presentPlan(store, s.runFile, "MD-29", { revision: 1 });
    const latest = await presentPlan(store, s.runFile, "MD-29");
    expect(latest.markdown).toContain(NOTE); // the note is right on revision 2
    expect(first.revision).toBe(1);
    expect.soft(first.markdown).not.toContain("Re-frozen without changes");
    expect.soft(first.markdown).not.toContain(NOTE);
    const frozenAt = (m: string) => /frozen (\S+) by/.exec(m)?.[1];
    expect.soft(frozenAt(first.markdown)).toBe(first.frozenAt);
  });
});
