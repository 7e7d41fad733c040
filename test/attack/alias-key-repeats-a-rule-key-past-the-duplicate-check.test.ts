/**
 * A frontmatter key written twice is refused (the YAML library's unique-key
 * check), so a person reading `dry_run_required: true` can trust it is the
 * rule. Found by attack round 20: the check compares plain keys only, and a
 * key written as an alias (`*k :`, with `k: &k dry_run_required` earlier)
 * repeats `dry_run_required` past it; the later `false` wins. The executor
 * reads "dry_run_required: true" to a person, is pinned, and is admitted to
 * APPLY_SAFE with no dry run.
 */
import { afterAll, describe, expect, it } from "vitest";
import { attemptAdmission, editExecutor, makeScenario, pinRefused, removeScenarios } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

const REPEATED = "note: &k dry_run_required\ndry_run_required: true\n*k : false";

describe("a rule key repeated through an alias key", () => {
  it("dry_run_required: true, then the same key again as an alias set to false: the suite is not pinned", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace("exact_twin_only: true\n", `exact_twin_only: true\n${REPEATED}\n`));
    expect((await pinRefused(s)) ?? "pinned").toMatch(/cannot pin/);
  });

  it("dry_run_required repeated through an alias key: an APPLY_SAFE admission without a passed dry run is refused", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace("exact_twin_only: true\n", `exact_twin_only: true\n${REPEATED}\n`));
    if ((await pinRefused(s)) !== undefined) return; // refused at the pin: nothing to admit
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
  });
});
