import { afterAll, describe, expect, it } from "vitest";
import { RefusalError } from "../errors/errors.js";
import { runCli } from "../test-support/run-cli.js";
import { driveTo, makeGateRun, PLANNER, removeGateRuns, workflowOf } from "../test-support/run-fixture.js";
import { requireScopeInPlan } from "./action-scope.js";

afterAll(removeGateRuns);

describe("the run's action scope and the plan", () => {
  it("a freeze is refused when the scope set at init-run names an action the plan does not hold, and nothing is frozen", async () => {
    const g = makeGateRun();
    await expect(driveTo(g, "plan_review_pending", { actions: ["A1", "A9"] })).rejects.toThrow(
      /cannot freeze the handoff: the run's action scope names \+ACTION:A9, which MD-29's plan does not hold \(its actions: \+ACTION:A1, \+ACTION:A2\); add it to the plan and freeze again, or start a new run whose action list names the plan's actions \(or all\)/,
    );
    expect(workflowOf(g).state).toBe("investigating");
    expect(workflowOf(g).handoff).toBeNull();
  });

  it("a scope within the plan, or all of it, freezes and goes on to consent", async () => {
    for (const actions of [["A1"], "all"] as const) {
      const g = makeGateRun();
      await driveTo(g, "dry_run_ready", { actions: actions === "all" ? "all" : [...actions] });
      expect(workflowOf(g).state).toBe("dry_run_ready");
    }
  });

  it("is refused through the CLI with exit 1 and one line naming the missing action", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating", { actions: ["ACTION-9"] });
    const r = await runCli(["freeze-pair-handoff", g.runFile, PLANNER, "--handoff", g.handoff, "--home", g.home]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("names +ACTION:ACTION-9, which MD-29's plan does not hold");
  });

  it("requireScopeInPlan passes all, and a scope inside the plan; refuses anything outside it, naming each missing action", () => {
    expect(() => requireScopeInPlan("all", [], PLANNER, "x")).not.toThrow();
    expect(() => requireScopeInPlan(["A1"], ["A1", "A2"], PLANNER, "x")).not.toThrow();
    expect(() => requireScopeInPlan(["A1", "A3", "A4"], ["A1"], PLANNER, "record execution consent")).toThrow(RefusalError);
    expect(() => requireScopeInPlan(["A3", "A4"], [], PLANNER, "record execution consent")).toThrow(
      /names \+ACTION:A3, \+ACTION:A4, which MD-29's plan does not hold \(its actions: none\); add them to the plan/,
    );
  });
});

describe("the reviewer sees the run's scope", () => {
  it("present says which actions this run may execute and which of the plan's are outside it", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending", { actions: ["A1"] });
    const r = await runCli(["present", g.runFile, PLANNER, "--home", g.home]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toContain("> This run may execute only `+ACTION:A1`; `+ACTION:A2` is outside its scope.");
  });
});

describe("an admission's requested actions, from any front end (CLI, server, MCP)", () => {
  it.each([
    [["all", "A1"], /the action list mixes all with action IDs/],
    [["A1", ""], /the action list holds "", which is not an action ID/],
    [["A1", "A1"], /the action list names "A1" twice/],
  ])("refuses %j before anything is read or used", async (actions, message) => {
    const { admit } = await import("./admit.js");
    const { folderRunStore } = await import("../home/folder-run-store.js");
    await expect(
      admit({
        run: "/nonexistent/run.json",
        store: folderRunStore({ dir: "/nonexistent", id: "home_0" } as never),
        executor: "MD-30",
        actions,
        actor: "agent",
      } as never),
    ).rejects.toThrow(message);
  });
});
