/**
 * A key one slip from a rule key, or the rule's first words, is FIELD_MISSPELT
 * (src/suite/parse-prompt-file.ts misspeltRuleKey), so a rule cannot be
 * written where the gate ignores it. Found by attack round 21: the check
 * counts each space as a slip, so `"dry_run_required   ": true` (the rule's
 * name, quoted, with three trailing spaces) is no misspelling to it and an
 * unknown key to the gate. It reads as dry_run_required: true to a person;
 * the executor is pinned and admitted to APPLY_SAFE with no dry run.
 */
import { afterAll, describe, expect, it } from "vitest";
import { misspeltRuleKey } from "../../src/suite/parse-prompt-file.js";
import { attemptAdmission, editExecutor, makeScenario, pinRefused, removeScenarios } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

const RULE = '"dry_run_required   ": true';

describe("a rule key padded with spaces", () => {
  it("a key that is dry_run_required once its spaces are trimmed is a misspelt rule", () => {
    expect(misspeltRuleKey("dry_run_required   ")).toBe("dry_run_required");
    expect(misspeltRuleKey("  dry_run_required  ")).toBe("dry_run_required");
  });

  it('"dry_run_required   ": true: the suite is not pinned', async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace("exact_twin_only: true\n", `exact_twin_only: true\n${RULE}\n`));
    expect((await pinRefused(s)) ?? "pinned").toMatch(/cannot pin/);
  });

  it('"dry_run_required   ": true: an APPLY_SAFE admission without a passed dry run is refused', async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace("exact_twin_only: true\n", `exact_twin_only: true\n${RULE}\n`));
    if ((await pinRefused(s)) !== undefined) return; // refused at the pin: nothing to admit
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
  });
});
