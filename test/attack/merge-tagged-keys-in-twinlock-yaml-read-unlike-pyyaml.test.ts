/**
 * Keys tagged `!!merge` in twinlock.yaml. The prompt frontmatter refuses
 * them (a YAML 1.1 reader and twinlock's YAML library merge differently),
 * but twinlock.yaml does not: twinlock's library merges every `!!merge` key,
 * keeping the FIRST value a key is merged with, while PyYAML (and other
 * YAML 1.1 readers) keep the LAST. Found by attack round 20: an agent that
 * writes `policies:` with `!!merge a: {required_approvals: 1}` then
 * `!!merge b: {required_approvals: 2}` gets a suite that reads "two
 * approvals" to the person's YAML tooling (and to a reader who takes the
 * later line as overriding), is pinned, and admits on one approval.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  admitExecutor,
  freezeReviewConsent,
  initRun,
  makeScenario,
  pinRefused,
  removeScenarios,
  type Scenario,
} from "./signed-suite-scenario.js";

afterAll(removeScenarios);

const MERGES = "  !!merge first: {required_approvals: 1}\n  !!merge second: {required_approvals: 2}\n";

function mergeApprovals(s: Scenario): string {
  const file = path.join(s.suite, "twinlock.yaml");
  const text = readFileSync(file, "utf8");
  expect(text).toContain("  required_approvals: 1\n");
  const changed = text.replace("  required_approvals: 1\n", MERGES);
  writeFileSync(file, changed);
  return changed;
}

describe("keys tagged !!merge in twinlock.yaml", () => {
  it("control: PyYAML reads required_approvals: 2 (the last merge wins)", () => {
    try {
      execFileSync("python3", ["-c", "import yaml"]);
    } catch {
      return; // no PyYAML here
    }
    const out = execFileSync(
      "python3",
      ["-c", "import sys,yaml; print(yaml.safe_load(sys.stdin.read())['policies']['required_approvals'])"],
      {
        input: `policies:\n  require_signed_receipts: true\n${MERGES}`,
      },
    );
    expect(out.toString().trim()).toBe("2");
  });

  it("required_approvals merged twice (1 to twinlock, 2 to PyYAML): the suite is not pinned", async () => {
    const s = await makeScenario();
    mergeApprovals(s);
    expect((await pinRefused(s)) ?? "pinned").toMatch(/cannot pin/);
  });

  it("required_approvals merged twice: one approval does not get the executor admitted", async () => {
    const s = await makeScenario();
    mergeApprovals(s);
    if ((await pinRefused(s)) !== undefined) return; // refused at the pin: nothing to admit
    await initRun(s, "DRAFT_ONLY");
    let admitted = false;
    try {
      await freezeReviewConsent(s); // one approval by alice
      admitted = (await admitExecutor(s)).admitted;
    } catch {
      admitted = false;
    }
    expect(admitted).toBe(false);
  });
});
