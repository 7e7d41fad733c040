/**
 * The suite walk reports a symbolic link (an error for validate, a reason for
 * every gate decision to wait) only when its name matches the prompt globs or
 * has no dot. A linked folder whose name has a dot (`archive.v2`, `x.d`) is
 * skipped without a word, so a second prompt declaring MD-30 behind it, which
 * any tool that follows links finds, leaves validate clean and admission
 * passing. The same link named `archive` is refused.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/test-support/run-cli.js";
import { admitExecutor, freezeReviewConsent, initRun, makeScenario, pin, removeScenarios, type Scenario } from "./signed-suite-scenario.js";

afterAll(removeScenarios);

/** A second MD-30 outside the suite, linked into it under `name`. */
function linkSecondExecutor(s: Scenario, name: string): void {
  const outside = path.join(s.dir, "outside");
  mkdirSync(outside, { recursive: true });
  const other = readFileSync(path.join(s.suite, "debugging", "md-26-quick-hotfix-applier.md"), "utf8").replace(
    /^prompt_id: MD-26$/m,
    "prompt_id: MD-30",
  );
  writeFileSync(path.join(outside, "md-30-quick.md"), other);
  symlinkSync(outside, path.join(s.suite, "debugging", name));
}

async function consented(): Promise<Scenario> {
  const s = await makeScenario();
  await pin(s);
  await initRun(s, "APPLY_SAFE");
  await freezeReviewConsent(s);
  return s;
}

describe("a linked folder in the suite holding a second MD-30", () => {
  it("control: named `archive`, it is reported and admission waits", async () => {
    const s = await consented();
    linkSecondExecutor(s, "archive");
    const r = await admitExecutor(s);
    expect(r.admitted).toBe(false);
    expect(r.output).toMatch(/SUITE_SYMLINK_SKIPPED/);
  });

  it("named `archive.v2`: validate should report it", async () => {
    const s = await makeScenario();
    linkSecondExecutor(s, "archive.v2");
    const r = await runCli(["validate", "--suite", s.suite]);
    expect(r.output).toMatch(/SUITE_SYMLINK_SKIPPED/);
    expect(r.code).toBe(1);
  });

  it("named `archive.v2`: admission should wait as for `archive`", async () => {
    const s = await consented();
    linkSecondExecutor(s, "archive.v2");
    const r = await admitExecutor(s);
    expect(r.admitted, r.output).toBe(false);
  });
});
