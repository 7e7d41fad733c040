/*
 * The Claude Agent SDK's adapter under twinlock's sandbox: Claude Code
 * waits there for its model until killed, so the subpath refuses to load in
 * one line that points to --hook-only, before the SDK starts anything.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_ENV } from "../../src/sandbox/sandbox-env.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../../src/test-support/ensure-built.js";
import { driveTo, makeGateRun, makeRunTempDir, removeGateRuns, workflowOf } from "../../src/test-support/run-fixture.js";

afterAll(() => removeGateRuns());

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

const entry = path.join(REPO_ROOT, "dist", "adapters", "claude-agent-sdk.js");
function load(extra: NodeJS.ProcessEnv) {
  return spawnSync(
    process.execPath,
    ["--input-type=module", "-e", `const a = await import(${JSON.stringify(entry)}); console.log(typeof a.gateHooks);`],
    {
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...extra },
    },
  );
}

describe("twinlock/claude-agent-sdk under exec's sandbox", () => {
  it("ends the script in one line pointing to --hook-only, exit 2, no stack, when exec's sandbox variable is set", () => {
    const r = load({ [SANDBOX_ENV]: "bubblewrap" });
    expect(r.stderr).toBe(
      "twinlock: twinlock/claude-agent-sdk does not run under --sandbox: the Claude Code it starts waits there for its model, silent, until killed; run exec or plan with --hook-only instead (the adapter's hooks judge every tool call) and confine the process another way if you need to (a container, an OS account)\n",
    );
    expect(r.stdout).toBe("");
    expect(r.status).toBe(2);
  });

  it("loads as before outside the sandbox", () => {
    const r = load({});
    expect(r.stdout).toBe("function\n");
    expect(r.status).toBe(0);
  });
});

describe("twinlock exec --sandbox of a script on the Claude Agent SDK", () => {
  function exec(dir: string, runFile: string, flag: string) {
    return spawnSync(process.execPath, [DIST_BIN, "exec", runFile, "MD-30", flag, "--", "node", "agent.mjs"], {
      cwd: dir,
      encoding: "utf8",
      env: {
        PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
        HOME: makeRunTempDir("twinlock-exec-user-"),
        TWINLOCK_HOME: process.env.TWINLOCK_HOME,
      },
    });
  }
  it("is refused in one line pointing to --hook-only before the admission, so a following exec --hook-only is admitted", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    writeFileSync(path.join(g.dir, "agent.mjs"), '// import { gateHooks } from "twinlock/claude-agent-sdk";\nprocess.exit(0);\n');
    const refused = exec(g.dir, g.runFile, "--sandbox");
    expect(refused.status, refused.stderr).toBe(2);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(/Claude Agent SDK.*--hook-only.*consent is not used/);
    expect(workflowOf(g).state).toBe("dry_run_ready");
    const admitted = exec(g.dir, g.runFile, "--hook-only");
    expect(admitted.status, admitted.stderr).toBe(0);
  });
});
