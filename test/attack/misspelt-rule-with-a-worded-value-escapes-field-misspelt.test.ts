/**
 * A key near a rule key is FIELD_MISSPELT only when its value has the rule's
 * shape (src/suite/parse-prompt-file.ts misspeltRule/holdsRuleValue). Found by
 * attack round 22: the shape test knows flags only as true/false/yes/no/on/off/
 * 0/1 and modes only as their exact names, so a rule written in words a person
 * reads as the rule is an unknown key to the gate, silently ignored:
 *
 * - `dry_run: required` (the rule's first words, which the check itself counts
 *   as meaning dry_run_required) reads as "a dry run is required"; the executor
 *   is pinned and admitted to APPLY_SAFE with no dry run;
 * - `allowed-modes: [draft-only, verify-only]` reads as "only DRAFT_ONLY and
 *   VERIFY_ONLY"; the executor is pinned and admitted to APPLY_SAFE.
 */
import { afterAll, describe, expect, it } from "vitest";
import { misspeltRule } from "../../src/suite/parse-prompt-file.js";
import { attemptAdmission, editExecutor, makeScenario, pinRefused, removeScenarios } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

describe("a misspelt rule whose value is written in words", () => {
  it("`dry_run: required` and `allowed-modes: [draft-only]` are misspelt rules", () => {
    expect(misspeltRule("dry_run", "required")).toBe("dry_run_required");
    expect(misspeltRule("dry_run", "always")).toBe("dry_run_required");
    expect(misspeltRule("allowed-modes", ["draft-only", "verify-only"])).toBe("allowed_modes");
  });

  it("dry_run: required: the suite is not pinned, or an APPLY_SAFE admission without a passed dry run is refused", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace("exact_twin_only: true\n", "exact_twin_only: true\ndry_run: required\n"));
    if ((await pinRefused(s)) !== undefined) return; // refused at the pin: nothing to admit
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
  });

  it("allowed-modes: [draft-only, verify-only]: the suite is not pinned, or an APPLY_SAFE admission is refused", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) =>
      t.replace("allowed_modes: [DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY]\n", "allowed-modes: [draft-only, verify-only]\n"),
    );
    if ((await pinRefused(s)) !== undefined) return;
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
  });
});
