/**
 * YAML that other tools read differently from twinlock is refused in
 * frontmatter and twinlock.yaml (src/suite/yaml-traps.ts). Found by attack
 * round 21: an anchor name holding a colon is not. The YAML 1.2 library reads
 * `&x:true false` as the anchor `x:true` on the boolean false; PyYAML (and
 * other YAML 1.1 readers) end an anchor name at the colon and read the anchor
 * `x` on the string ":true false". An executor declaring
 * `dry_run_required: &x:true false` is "true" to a person's eye, a string (so,
 * read failing closed as twinlock itself does, a dry run) to PyYAML, and false
 * to the gate: it is pinned and admitted to APPLY_SAFE with no dry run. In
 * twinlock.yaml, `required_approvals: &n:2 1` is ":2 1" to PyYAML and 1 to the gate.
 */
import { afterAll, describe, expect, it } from "vitest";
import { parseSuiteConfig } from "../../src/suite/load-suite.js";
import { attemptAdmission, editExecutor, makeScenario, pinRefused, removeScenarios } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

const RULE = "dry_run_required: &x:true false";

describe("an anchor name holding a colon", () => {
  it("dry_run_required: &x:true false (PyYAML: the string ':true false'): the suite is not pinned", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace("exact_twin_only: true\n", `exact_twin_only: true\n${RULE}\n`));
    expect((await pinRefused(s)) ?? "pinned").toMatch(/cannot pin/);
  });

  it("dry_run_required: &x:true false: an APPLY_SAFE admission without a passed dry run is refused", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace("exact_twin_only: true\n", `exact_twin_only: true\n${RULE}\n`));
    if ((await pinRefused(s)) !== undefined) return; // refused at the pin: nothing to admit
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
  });

  it("twinlock.yaml with required_approvals: &n:2 1 (PyYAML: the string ':2 1') is refused, not read as 1 approval", () => {
    const { config, diagnostics } = parseSuiteConfig("suite_id: s\npolicies:\n  required_approvals: &n:2 1\n");
    expect(diagnostics.length, JSON.stringify(config)).toBeGreaterThan(0);
  });
});
