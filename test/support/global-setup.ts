/**
 * Once per test run (vitest `globalSetup`): a template gate home with the
 * shared example suites pinned, as a person would pin them before the first
 * run. Each test file starts from its own copy (gate-home-setup.ts), which
 * costs a folder copy instead of loading and pinning both suites again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export default async function setup(): Promise<() => void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-test-template-"));
  // The unsigned copy of the example suite every test file shares (read-only: tests that change a suite copy it).
  process.env.TWINLOCK_TEST_ROOT = dir;
  const { openGateHome } = await import("../../src/home/gate-home.js");
  const { pinForTest, RUN_EXAMPLE_SUITE } = await import("../../src/test-support/run-fixture.js");
  const { EXAMPLE_SUITE } = await import("../../src/test-support/temp-suite.js");
  const home = openGateHome(path.join(dir, "home"), { create: true });
  await pinForTest(RUN_EXAMPLE_SUITE, false, home);
  await pinForTest(EXAMPLE_SUITE, false, home);
  process.env.TWINLOCK_TEST_TEMPLATE_HOME = home.dir;
  process.env.TWINLOCK_TEST_SCRATCH = dir;
  process.env.TWINLOCK_TEST_UNSIGNED_SUITE = RUN_EXAMPLE_SUITE;
  delete process.env.TWINLOCK_TEST_ROOT;
  return () => rmSync(dir, { recursive: true, force: true });
}
