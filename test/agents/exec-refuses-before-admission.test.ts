/*
 * `twinlock exec` refuses targets its sandbox could not mount (a file
 * target's folder holding a symbolic link, or more entries than the
 * sandbox's budget) before the admission: nothing is recorded and the
 * consent is still unused, so the person can fix the tree and run exec
 * again. The agent planted the link (or the entries) in its own tree.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { receiptHash } from "../../src/run/receipt-hash.js";
import { SIBLING_BUDGET } from "../../src/sandbox/target-parents.js";
import {
  driveTo,
  type GateRun,
  makeGateRun,
  makeRunTempDir,
  removeGateRuns,
  storeOf,
  workflowOf,
} from "../../src/test-support/run-fixture.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

beforeAll(ensureBuilt, 180_000);
afterAll(() => removeGateRuns());

/** A run ready to admit MD-30, whose targets are cart/cache.go and the new cart/cache_race_test.go. */
async function readyRun(): Promise<GateRun> {
  const g = makeGateRun();
  await driveTo(g, "dry_run_ready");
  mkdirSync(path.join(g.dir, "cart"));
  return g;
}

/** Claude Code as its package's script (never started here: exec refuses first). */
function claudeScript(): string {
  const script = path.join(makeRunTempDir("twinlock-claude-"), "node_modules", "@anthropic-ai", "claude-code", "cli.js");
  mkdirSync(path.dirname(script), { recursive: true });
  writeFileSync(script, "#!/usr/bin/env node\nprocess.exit(0);\n");
  chmodSync(script, 0o755);
  return script;
}

function exec(g: GateRun, cmd: string[]) {
  return spawnSync(process.execPath, [DIST_BIN, "exec", g.runFile, "MD-30", "--", ...cmd], {
    cwd: g.dir,
    encoding: "utf8",
    env: {
      PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: makeRunTempDir("twinlock-exec-user-"),
      TWINLOCK_HOME: process.env.TWINLOCK_HOME,
    },
  });
}

/** That the run records no admission and its latest consent is not used. */
async function expectNotAdmitted(g: GateRun): Promise<void> {
  const store = storeOf(g);
  const run = await store.read(g.runFile);
  expect(run.file.events.map((e) => e.type)).not.toContain("admitted");
  const wf = workflowOf(g);
  expect(wf.state).toBe("dry_run_ready");
  expect(wf.admissions).toHaveLength(0);
  const consent = wf.consents[wf.consents.length - 1];
  expect(await store.findConsumedConsent(receiptHash(consent as object))).toBeUndefined();
}

describe("twinlock exec checks the targets before the admission", () => {
  it("refuses an action target that is a symbolic link pointing outside, beside a file target, with no admission recorded and the consent unused", async () => {
    const g = await readyRun();
    const outside = path.join(makeRunTempDir("twinlock-outside-"), "cache.go");
    writeFileSync(outside, "elsewhere\n");
    symlinkSync(outside, path.join(g.dir, "cart", "cache.go"));
    const r = exec(g, [process.execPath, claudeScript(), "-p", "fix it"]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/cart\/cache\.go is a symbolic link beside the file target .*cart\/cache_race_test\.go/);
    expect(r.stderr).not.toMatch(/admitted MD-30/);
    await expectNotAdmitted(g);
  }, 60_000);

  it(`refuses a file target whose folder holds more than ${SIBLING_BUDGET} entries, with no admission recorded and the consent unused`, async () => {
    const g = await readyRun();
    writeFileSync(path.join(g.dir, "cart", "cache.go"), "before\n");
    for (let i = 0; i < SIBLING_BUDGET; i++) writeFileSync(path.join(g.dir, "cart", `f${i}.go`), "");
    const r = exec(g, [process.execPath, claudeScript(), "-p", "fix it"]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        `cart of the file target \\S+ holds ${SIBLING_BUDGET + 1} entries, more than the ${SIBLING_BUDGET} the sandbox keeps read-only`,
      ),
    );
    await expectNotAdmitted(g);
  }, 60_000);
});
