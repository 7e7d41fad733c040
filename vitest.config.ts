import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default leaves one core free, which on a 2-core machine runs every file in turn; the tests wait on child
    // processes, sockets and fsync much of the time, so three files at once keep both cores busy.
    maxWorkers: 3,
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/gate-home-setup.ts"],
  },
});
