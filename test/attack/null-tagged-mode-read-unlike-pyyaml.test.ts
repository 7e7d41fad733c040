/**
 * src/suite/yaml-traps.ts refuses what YAML tools read differently from
 * twinlock. Found by attack round 22: a standard tag the `yaml` library cannot
 * resolve on a scalar (`!!null APPLY_SAFE`) is only a warning to it, and the
 * scalar is kept as the string "APPLY_SAFE"; the warnings are never looked at.
 * PyYAML's safe_load reads `!!null APPLY_SAFE` as null, whatever the text. So
 *
 *   allowed_modes: [DRAFT_ONLY, !!null APPLY_SAFE, VERIFY_ONLY]
 *
 * is [DRAFT_ONLY, None, VERIFY_ONLY] to PyYAML (APPLY_SAFE "nulled", as a
 * person may read it too), and allows APPLY_SAFE to the gate: the executor is
 * pinned and admitted to APPLY_SAFE. The same holds for a tagged key
 * (`!!null dry_run_required: true` is a None key to PyYAML, the rule to twinlock).
 */
import { afterAll, describe, expect, it } from "vitest";
import { parseWithYaml } from "../../src/suite/parse-prompt-file.js";
import { attemptAdmission, editExecutor, makeScenario, pinRefused, removeScenarios } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

const ALL = "allowed_modes: [DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY]";

describe("a scalar with a standard tag the yaml library does not resolve", () => {
  it("frontmatter with `!!null APPLY_SAFE` or a `!!null` key is refused as read unlike other YAML tools", () => {
    expect(parseWithYaml("allowed_modes: [DRAFT_ONLY, !!null APPLY_SAFE]\n", "x.md")).toHaveProperty("diagnostics");
    expect(parseWithYaml("!!null dry_run_required: true\n", "x.md")).toHaveProperty("diagnostics");
  });

  it("allowed_modes: [DRAFT_ONLY, !!null APPLY_SAFE, VERIFY_ONLY]: the suite is not pinned, or APPLY_SAFE is refused", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace(`${ALL}\n`, "allowed_modes: [DRAFT_ONLY, !!null APPLY_SAFE, VERIFY_ONLY]\n"));
    if ((await pinRefused(s)) !== undefined) return; // refused at the pin: nothing to admit
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
  });
});
