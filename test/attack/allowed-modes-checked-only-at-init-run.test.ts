/**
 * An executor's `allowed_modes`, against an agent that edits its working copy
 * of the suite. Found by an attack round: checked only by init-run, against
 * the file as it was at that moment, so widening it for the one init-run call
 * and putting the file back byte for byte admitted the executor in a mode the
 * pinned file forbids. Now init-run refuses a file that is not the pinned one,
 * and admission judges the mode against the pinned executor again.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { attemptAdmission, editExecutor, makeScenario, pin, pinRefused, removeScenarios, tryInitRun } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

const allowOnly = (modes: string) => (text: string) => text.replace(/^allowed_modes: .*$/m, `allowed_modes: ${modes}`);

describe("allowed_modes of the executor", () => {
  it("control: init-run refuses a mode the pinned executor does not allow", async () => {
    const s = await makeScenario();
    editExecutor(s, allowOnly("[DRAFT_ONLY, VERIFY_ONLY]"));
    await pin(s);
    const r = await tryInitRun(s, "APPLY_SAFE");
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/does not allow mode APPLY_SAFE/);
  });

  it("widened for init-run only, then restored byte for byte: init-run refuses the widened file, which is not the pinned one", async () => {
    const s = await makeScenario();
    editExecutor(s, allowOnly("[DRAFT_ONLY, VERIFY_ONLY]"));
    await pin(s);
    const pinnedBytes = readFileSync(s.executorFile);
    copyFileSync(s.executorFile, `${s.dir}/md-30.orig`);
    editExecutor(s, allowOnly("[DRAFT_ONLY, VERIFY_ONLY, APPLY_SAFE]"));
    const widened = await tryInitRun(s, "APPLY_SAFE");
    expect(widened.code).toBe(1);
    expect(widened.output).toMatch(/MD-30's prompt file .* changed since suite \S+ was pinned/);
    copyFileSync(`${s.dir}/md-30.orig`, s.executorFile);
    expect(readFileSync(s.executorFile).equals(pinnedBytes)).toBe(true);
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
    expect(r.output).toMatch(/does not allow mode APPLY_SAFE/);
  });

  it("allowed_modes written as one mode, not a list (validate: FIELD_TYPE): the suite is not pinned, so nothing runs", async () => {
    const s = await makeScenario();
    editExecutor(s, allowOnly("DRAFT_ONLY"));
    expect(await pinRefused(s)).toMatch(/cannot pin: MD-30 .*`allowed_modes` must be a list of modes/);
    const r = await tryInitRun(s, "APPLY_SAFE");
    expect(r.code, r.output).not.toBe(0);
  });
});
