import { defineConfig } from "vitest/config";

/**
 * Test files beside the code that need a worker of their own: they mock modules (`vi.mock`, `vi.spyOn`, fake timers)
 * or change the process's working folder. Every other file under src/, and the attack and docs tests, shares its
 * worker's loaded modules with the files that ran in it before (`isolate: false`): loading the library again for each
 * of some 160 files was much of the default run's time. Each file still gets its own gate home and scratch root
 * (test/support/gate-home-setup.ts runs before every file), and restores any environment variable it sets.
 */
const OWN_WORKER = [
  "src/checks/check-twin-refusal.test.ts",
  "src/ci/verify-run.test.ts",
  "src/cli/commands/demo.test.ts",
  "src/cli/commands/hooks.test.ts",
  "src/cli/main.test.ts",
  "src/diagnostics/diagnostic-codes.test.ts",
  "src/gate/bind-session.test.ts",
  "src/gate/stop-ends-sessions.test.ts",
  "src/handoff/formats/custom-format.test.ts",
  "src/run/replay-linear.test.ts",
  "src/store/atomic-write.test.ts",
  "src/store/run-file-budget.test.ts",
  "src/store/run-file-lock.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default leaves one core free, which on a 2-core machine runs every file in turn; the tests wait on child
    // processes, sockets and fsync much of the time, so three files at once keep both cores busy.
    maxWorkers: 3,
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/gate-home-setup.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "shared-worker",
          include: ["src/**/*.test.ts", "test/attack/**/*.test.ts", "test/docs/**/*.test.ts"],
          exclude: OWN_WORKER,
          isolate: false,
        },
      },
      {
        // The process-level tests: real CLI processes, servers, browsers, crashes; each file in a fresh worker.
        extends: true,
        test: {
          name: "own-worker",
          include: [...OWN_WORKER, "test/**/*.test.ts"],
          exclude: ["test/attack/**", "test/docs/**"],
          isolate: true,
        },
      },
    ],
  },
});
