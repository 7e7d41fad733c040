/**
 * Every test file gets its own gate home and scratch root (vitest
 * `setupFiles`): `TWINLOCK_HOME` points at it for the library and for the
 * child processes tests start, and both are removed when the file ends,
 * even when a test fails.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

const root = mkdtempSync(path.join(os.tmpdir(), "twinlock-test-home-"));
process.env.TWINLOCK_TEST_ROOT = root;
process.env.TWINLOCK_HOME = path.join(root, "home");

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

// The suites most tests start runs on are pinned up front, as a person would before the first run.
const { pinForTest, RUN_EXAMPLE_SUITE } = await import("../../src/test-support/run-fixture.js");
const { EXAMPLE_SUITE } = await import("../../src/test-support/temp-suite.js");
await pinForTest(RUN_EXAMPLE_SUITE);
await pinForTest(EXAMPLE_SUITE);
