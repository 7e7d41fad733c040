/*
 * The offline SDK examples say on stderr, one line each, what the gate did:
 * here each executor's write, with no session bound, is one denial line with
 * the gate's reason (besides what the example prints on stdout).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, REPO_ROOT } from "../../src/test-support/ensure-built.js";

const scratch: string[] = [];
beforeAll(async () => {
  await ensureBuilt();
}, 180_000);
afterAll(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

describe("the SDK examples' stderr", () => {
  for (const sdk of ["ai-sdk", "openai-agents", "langgraph"]) {
    it(`is one line naming the denied tool and the gate's reason when examples/${sdk}'s executor writes with no session bound`, () => {
      const home = mkdtempSync(path.join(os.tmpdir(), "twinlock-example-home-"));
      const cwd = mkdtempSync(path.join(os.tmpdir(), "twinlock-example-cwd-"));
      scratch.push(home, cwd);
      const r = spawnSync(process.execPath, [path.join(REPO_ROOT, "examples", sdk, "agent.mjs"), "cart/cache.go"], {
        cwd,
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: process.env.HOME, TWINLOCK_HOME: home },
      });
      expect(r.status, r.stderr).toBe(0);
      const lines = r.stderr.split("\n").filter(Boolean);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^twinlock: write_file denied: no twinlock session is bound \(/);
      expect(r.stdout, "the denial is said once, on stderr, not again on stdout").not.toMatch(/denied|no twinlock session/);
    });
  }
});
