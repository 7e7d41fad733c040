/**
 * A `%YAML 1.1` directive at the top of a prompt's frontmatter (followed by a
 * `--- # comment` line, which is no frontmatter fence to twinlock) switches
 * twinlock's YAML library to YAML 1.1: it then applies merge keys (`<<`)
 * itself, so the refusal of merge keys never fires, and reads `y`/`n` as
 * booleans. Its merge rules differ from PyYAML's: with two `<<` keys in one
 * mapping, the library keeps the FIRST merged value, PyYAML the LAST. Found by
 * attack round 20: an executor whose frontmatter reads `dry_run_required:
 * true` to PyYAML (a reviewer's tool, a runtime reading the prompt) is pinned
 * and admitted to APPLY_SAFE with no dry run, because twinlock reads false.
 */
import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { attemptAdmission, editExecutor, makeScenario, pinRefused, removeScenarios } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

/** The executor's frontmatter opened by a YAML 1.1 directive, `lines` added after `exact_twin_only: true`. */
const yaml11 = (lines: string) => (text: string) =>
  text
    .replace(/^---\n/, "---\n%YAML 1.1\n--- # rules of the executor\n")
    .replace("exact_twin_only: true\n", `exact_twin_only: true\n${lines}\n`);

const DOUBLE_MERGE = "<<: {dry_run_required: false}\n<<: {dry_run_required: true}";

function pyyamlDryRunRequired(frontmatter: string): unknown {
  const out = execFileSync(
    "python3",
    ["-c", "import sys,yaml,json; print(json.dumps(yaml.safe_load(sys.stdin.read()).get('dry_run_required')))"],
    { input: frontmatter },
  );
  return JSON.parse(out.toString());
}

describe("a %YAML 1.1 directive in a prompt's frontmatter", () => {
  it("control: PyYAML reads dry_run_required: true from the two merge keys (the last merge wins)", () => {
    let hasPython = true;
    try {
      execFileSync("python3", ["-c", "import yaml"]);
    } catch {
      hasPython = false;
    }
    if (!hasPython) return;
    expect(pyyamlDryRunRequired(`%YAML 1.1\n--- # rules\nprompt_id: MD-30\n${DOUBLE_MERGE}\n`)).toBe(true);
  });

  it("two merge keys under %YAML 1.1 (twinlock reads dry_run_required false, PyYAML true): the suite is not pinned", async () => {
    const s = await makeScenario();
    editExecutor(s, yaml11(DOUBLE_MERGE));
    expect((await pinRefused(s)) ?? "pinned").toMatch(/cannot pin/);
  });

  it("two merge keys under %YAML 1.1: an APPLY_SAFE admission without a passed dry run is refused", async () => {
    const s = await makeScenario();
    editExecutor(s, yaml11(DOUBLE_MERGE));
    if ((await pinRefused(s)) !== undefined) return; // refused at the pin: nothing to admit
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
  });

  it('dry_run_required: n under %YAML 1.1 (false to twinlock, the string "n" to PyYAML): the suite is not pinned', async () => {
    const s = await makeScenario();
    editExecutor(s, yaml11("dry_run_required: n"));
    expect((await pinRefused(s)) ?? "pinned").toMatch(/cannot pin/);
  });
});
