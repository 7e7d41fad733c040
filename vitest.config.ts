import path from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The longest file first, whichever project it is in. Vitest's own order runs one project's files after the other's
 * (by name: every own-worker file before any shared-worker one), so the longest shared-worker files, started
 * last, were the run's tail while the own-worker files left cores idle between their fresh workers. Files this
 * machine has not run yet go first (their length unknown), then the larger file first, then the longer one by the
 * last run's time (node_modules/.vite/vitest), a file that failed last time before all of them.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const key = (f: TestSpecification) => `${f.project.name}:${path.relative(this.ctx.config.root, f.moduleId)}`;
    const last = new Map(files.map((f) => [f, cache.getFileTestResults(key(f))]));
    const size = (f: TestSpecification) => cache.getFileStats(key(f))?.size ?? 0;
    return [...files].sort((a, b) => {
      const [ra, rb] = [last.get(a), last.get(b)];
      if (!ra || !rb) return !ra && rb ? -1 : ra && !rb ? 1 : size(b) - size(a);
      if (ra.failed !== rb.failed) return ra.failed ? -1 : 1;
      return rb.duration - ra.duration;
    });
  }
}

/**
 * Test files that need a worker of their own: they mock modules (`vi.mock`), change the process's working folder, or
 * drive a browser. A file that only spies on a global (`Date.now`, `JSON.parse`, `fetch`, `structuredClone`) and
 * restores it after each test shares a worker: a worker runs one file at a time, and the next finds the global back. Every other file shares its worker's loaded modules with the files
 * that ran in it before (`isolate: false`): loading the library again for each of some 170 files was much of the
 * default run's time. Each file still gets its own gate home and scratch root (test/support/gate-home-setup.ts runs
 * before every file), restores any environment variable it sets, and stops every process and server it starts.
 */
const OWN_WORKER = [
  "src/checks/check-twin-refusal.test.ts",
  "src/ci/verify-run.test.ts",
  "src/cli/commands/demo.test.ts",
  "src/cli/commands/hooks.test.ts",
  "src/cli/main.test.ts",
  "src/diagnostics/diagnostic-codes.test.ts",
  "src/gate/bind-session.test.ts",
  // Asserts Ajv is not yet loaded in its process: another file in a shared worker may have loaded it.
  "src/handoff/json-schema-validator.test.ts",
  "src/store/atomic-write.test.ts",
  "src/store/run-file-remembered.test.ts",
  "test/fuzz/fuzz-parsers.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default leaves one core free, which on a 2-core machine runs every file in turn; the tests wait on child
    // processes, sockets and fsync much of the time, so three files at once keep both cores busy.
    maxWorkers: 3,
    // Transformed modules are kept on disk between runs (node_modules/.experimental-vitest-cache, keyed by each file's
    // content; `npx vitest --clearCache` empties it): a run after the first transforms only what changed.
    experimental: { fsModuleCache: true },
    sequence: { sequencer: LongestFirst },
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/gate-home-setup.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "shared-worker",
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: [...OWN_WORKER, "test/browser/**"],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: "own-worker", include: [...OWN_WORKER, "test/browser/**/*.test.ts"], isolate: true },
      },
    ],
  },
});
