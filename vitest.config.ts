import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default leaves one core free, which on a 2-core machine runs every file in turn; the tests wait on child processes much of the time.
    maxWorkers: 2,
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/gate-home-setup.ts"],
  },
});
