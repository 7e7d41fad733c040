import { describe, expect, it } from "vitest";
import { folderRunStore } from "../home/folder-run-store.js";
import { consentQuestion } from "./consent-question.js";
import { initRun } from "./init-run.js";

const start = (over: Record<string, unknown>) =>
  initRun({
    run: "/nonexistent/run.json",
    store: folderRunStore({ dir: "/nonexistent", id: "home_0" }),
    suiteRoot: "/nonexistent",
    planners: ["MD-29"],
    ...over,
  } as never);

describe("the settings a person consents to", () => {
  it("refuses an action ID that could hide text in the consent question (a terminal escape), before anything is read", async () => {
    await expect(start({ actions: ["A1\u001b[8m", "A2", "\u001b[0m"] })).rejects.toThrow(
      /the action list holds "A1\\u001b\[8m", which is not an action ID/,
    );
  });

  it("refuses an action named twice (the consent question would list it twice), before anything is read", async () => {
    await expect(start({ actions: ["A1", "A2", "A1"] })).rejects.toThrow('the action list names "A1" twice; list each +ACTION ID once');
    await expect(start({ actions: ["all", "A1"] })).rejects.toThrow("the action list mixes all with action IDs");
  });

  it("refuses an environment with a control, invisible or direction character", async () => {
    await expect(start({ environment: "staging\u001b[8m (and production)" })).rejects.toThrow(/--environment contains a control/);
    await expect(start({ environment: "staging\u200b" })).rejects.toThrow(/--environment contains a control/);
  });

  it("prints every value of the consent question clean, whatever the run file holds", () => {
    const q = consentQuestion(
      { planner: "MD-29", executor: "MD-30", executor_title: "Fix\u001b[8m hidden", revision: 1, handoff: null },
      { mode: "APPLY_SAFE", environment: "staging\u001b[8m", actions: ["A1\u001b[8m", "A2"], budget: 1 },
    );
    expect(q.includes("\u001b")).toBe(false);
    expect(q).toContain("on actions A1�[8m, A2");
  });
});
