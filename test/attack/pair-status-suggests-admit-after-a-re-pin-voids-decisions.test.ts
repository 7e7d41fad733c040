/**
 * A person re-pins the suite after the consent (a reviewed change to
 * twinlock.yaml, or to the executor's prompt file). Decisions made under the
 * old policy or executor are void: admission refuses them (check `policy`,
 * `executor-file`), and consent-pair-execution refuses to be asked again
 * ("the legal next step is to admit"). Found by attack round 20: pair-status
 * keeps suggesting `twinlock admit`, which the gate refuses every time, and
 * never the one step that gets out (a re-freeze, then review and consent).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliJson } from "../../src/test-support/run-cli.js";
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
  ])("%s: does not suggest `admit`, which the gate refuses every time", async (_, check, change) => {
    const s = await makeScenario();
    await pin(s);
    await initRun(s, "APPLY_SAFE");
    await freezeReviewConsent(s);
    change(s);
    await pin(s); // the person reviewed the change and re-pinned
    const refused = await admitExecutor(s);
    expect(refused.admitted).toBe(false);
    expect(refused.failed).toContain(check);
    expect(await nextOperation(s)).not.toBe("admit");
  });
});
