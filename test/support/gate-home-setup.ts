/**
 * Every test file gets its own gate home and scratch root (vitest
 * `setupFiles`): `TWINLOCK_HOME` points at it for the library and for the
 * child processes tests start, and both are removed when the file ends,
 * even when a test fails. The home starts as a copy of the template
 * global-setup.ts made, with the shared example suites already pinned.
 * The shared folders (shared-fixtures.ts) are compared before and after the
 * file: a file during which one changed fails, naming what changed.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { fixtureChanges, snapshotSharedFixtures } from "./shared-fixtures.js";

// Every parse the fast validators answer is checked against zod's own (src/schemas/lazy-schema.ts), here and in the
// CLI processes the tests start.
process.env.TWINLOCK_COMPARE_FAST_VALIDATORS = "1";

// Inside the run's scratch folder when there is one, which global-setup.ts removes at the end: a file whose tests
// are all skipped never runs its afterAll.
const root = mkdtempSync(path.join(process.env.TWINLOCK_TEST_SCRATCH ?? os.tmpdir(), "twinlock-test-home-"));
process.env.TWINLOCK_TEST_ROOT = root;
process.env.TWINLOCK_HOME = path.join(root, "home");
const template = process.env.TWINLOCK_TEST_TEMPLATE_HOME;
if (template) cpSync(template, process.env.TWINLOCK_HOME, { recursive: true });

const shared = snapshotSharedFixtures();

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  const changes = fixtureChanges(shared, snapshotSharedFixtures());
  if (changes.length > 0)
    throw new Error(
      `a shared test fixture changed while this test file ran (this file, or one running beside it, wrote into it; copy it instead): ${changes.join("; ")}`,
    );
});
