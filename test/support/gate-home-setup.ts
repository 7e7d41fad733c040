/**
 * Every test file gets its own gate home and scratch root (vitest
 * `setupFiles`): `TWINLOCK_HOME` points at it for the library and for the
 * child processes tests start, and both are removed when the file ends,
 * even when a test fails. The home starts as a copy of the template
 * global-setup.ts made, with the shared example suites already pinned.
 * The shared folders (shared-fixtures.ts) are compared before and after the
 * file: a file during which one changed fails, naming what changed.
 */
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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

/**
 * With TWINLOCK_TEST_CPU_LOG=FILE, each test file appends one line to FILE: its path, then the milliseconds of CPU its
 * worker spent on it and those of the child processes it started and waited for (/proc's cutime and cstime), so the
 * default run's cost can be found file by file in one run (`sort -t$'\t' -k2 -rn`).
 */
const cpuLog = process.env.TWINLOCK_TEST_CPU_LOG;
const cpuAtStart = process.cpuUsage();
const childrenAtStart = childrenCpuMs();

function childrenCpuMs(): number {
  try {
    // Fields after the command's closing parenthesis: cutime and cstime are the 14th and 15th, in clock ticks (100 a second).
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

// biome-ignore lint/correctness/noEmptyPattern: vitest requires the context argument as a destructuring pattern
afterAll(({}, suite) => {
  if (cpuLog) {
    const own = process.cpuUsage(cpuAtStart);
    const file = path.relative(process.cwd(), "filepath" in suite ? suite.filepath : "");
    appendFileSync(cpuLog, `${file}\t${Math.round((own.user + own.system) / 1000)}\t${childrenCpuMs() - childrenAtStart}\n`);
  }
  rmSync(root, { recursive: true, force: true });
  const changes = fixtureChanges(shared, snapshotSharedFixtures());
  if (changes.length > 0)
    throw new Error(
      `a shared test fixture changed while this test file ran (this file, or one running beside it, wrote into it; copy it instead): ${changes.join("; ")}`,
    );
});
