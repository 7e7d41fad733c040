/*
 * The Claude Agent SDK's adapter under twinlock's sandbox: Claude Code
 * waits there for its model until killed, so the subpath refuses to load in
 * one line that points to --hook-only, before the SDK starts anything.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_ENV } from "../../src/sandbox/sandbox-env.js";
import { ensureBuilt, REPO_ROOT } from "../../src/test-support/ensure-built.js";

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
