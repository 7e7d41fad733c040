/**
 * A person re-pins the suite after the consent (a reviewed change to
 * twinlock.yaml, or to the executor's prompt file). Decisions made under the
 * old policy or executor are void: admission refuses them (check `policy`,
 * `executor-file`), and consent-pair-execution refuses to be asked again
 * ("the legal next step is to admit"). Found by attack round 20: pair-status
 * kept suggesting `twinlock admit`, which the gate refuses every time, and
 * never the one step that gets out. Now it suggests re-freezing the same
 * handoff as a new revision, which the gate accepts only when a re-pin voided
 * the decisions on it, and a review and consent under the pin as it is now
 * lead to an admission.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, runCliJson } from "../../src/test-support/run-cli.js";
import {
  admitExecutor,
  editExecutor,
  freezeReviewConsent,
  initRun,
  makeScenario,
  pin,
  removeScenarios,
  type Scenario,
} from "./signed-suite-scenario.js";

afterAll(removeScenarios);

async function nextOperation(s: Scenario): Promise<string | null> {
  const r = await runCliJson<{ next_step?: { operation: string | null } }>(["pair-status", s.runFile, "MD-29", "--home", s.home]);
  return r.json.next_step?.operation ?? null;
}

describe("pair-status after a re-pin that voids the review and consent", () => {
  it.each([
    [
      "twinlock.yaml changed (policy)",
      "policy",
      (s: Scenario) => {
        const config = path.join(s.suite, "twinlock.yaml");
        writeFileSync(config, `${readFileSync(config, "utf8")}# a reviewed change\n`);
      },
    ],
    [
      "the executor's prompt file changed (executor-file)",
      "executor-file",
      (s: Scenario) => editExecutor(s, (t) => `${t}\nA reviewed line added to the body.\n`),
    ],
  ])("%s: suggests re-freezing the same handoff, and that way out leads to an admission", async (_, check, change) => {
    const s = await makeScenario();
    await pin(s);
    await initRun(s, "APPLY_SAFE");
    await freezeReviewConsent(s);
    change(s);
    await pin(s); // the person reviewed the change and re-pinned
    const refused = await admitExecutor(s);
    expect(refused.admitted).toBe(false);
    expect(refused.failed).toContain(check);
    expect(await nextOperation(s)).toBe("freeze-pair-handoff");
    // The way out: the same handoff frozen as a new revision, reviewed and consented to under the pin as it is now.
    await freezeReviewConsent(s);
    const shown = await runCli(["present", s.runFile, "MD-29", "--home", s.home]);
    expect(shown.output).toMatch(/Re-frozen without changes: a re-pin of the suite .* voided the decisions on revision 1/);
    const r = await runCliJson<{ revision?: number; state?: string }>(["pair-status", s.runFile, "MD-29", "--home", s.home]);
    expect(r.json).toMatchObject({ revision: 2, state: "dry_run_ready" });
    const admitted = await admitExecutor(s);
    expect(admitted.admitted, admitted.output).toBe(true);
  });

  it("still refuses to re-freeze an unchanged handoff whose decisions hold", async () => {
    const s = await makeScenario();
    await pin(s);
    await initRun(s, "APPLY_SAFE");
    await freezeReviewConsent(s);
    await pin(s); // renewed, nothing changed
    const again = await runCliJson([
      "freeze-pair-handoff",
      s.runFile,
      "MD-29",
      "--handoff",
      s.handoff,
      "--key",
      s.planner,
      "--home",
      s.home,
    ]);
    expect(again.code).not.toBe(0);
    expect(again.output).toMatch(/there is nothing to re-freeze/);
    expect(await nextOperation(s)).toBe("exec");
  });
});
