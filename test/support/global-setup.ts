/**
 * Once per test run (vitest `globalSetup`): a template gate home with the
 * shared example suites pinned, as a person would pin them before the first
 * run. Each test file starts from its own copy (gate-home-setup.ts), which
 * costs a folder copy instead of loading and pinning both suites again.
 * Each vitest project runs its global setup; the first makes the template
 * and the folders for the whole run, the others use them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Set once the first project's setup has made the run's template (the projects' setups share this process). */
const MADE = Symbol.for("twinlock.test.template-made");

export default async function setup(): Promise<() => void> {
  const made = globalThis as { [MADE]?: boolean };
  if (made[MADE]) return () => {};
  made[MADE] = true;
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
  // Every test file compares the shared folders before and after it (gate-home-setup.ts); the whole run does too,
  // for a change made while no file was looking.
  const { fixtureChanges, snapshotSharedFixtures } = await import("./shared-fixtures.js");
  const shared = snapshotSharedFixtures();
  return () => {
    const changes = fixtureChanges(shared, snapshotSharedFixtures());
    rmSync(dir, { recursive: true, force: true });
    if (changes.length > 0) throw new Error(`a shared test fixture changed during the test run: ${changes.join("; ")}`);
  };
}
