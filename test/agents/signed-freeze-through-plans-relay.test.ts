/*
 * A suite that signs freezes, and an SDK planner under `twinlock plan`: the
 * planner's freeze goes through plan's relay (its `twinlock mcp`, outside the
 * agent, started with no key), so it cannot be signed there. The agent is
 * told in one line what the person can do instead (and the freeze it names
 * is taken); the agent freezes nothing, and no key is asked of it.
 * Real processes: the built CLI, its relay, and an agent script using the
 * built adapters' planner session.
 */
import { spawnSync } from "node:child_process";
import { realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBubblewrap } from "../../src/sandbox/find-bubblewrap.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../../src/test-support/ensure-built.js";
import { FREEZER, signingGateRun } from "../../src/test-support/gate-signed-run.js";
import { homeOf, PLANNER, removeGateRuns, startRun, workflowOf } from "../../src/test-support/run-fixture.js";

beforeAll(ensureBuilt, 180_000);
const keys: string[] = [];
afterAll(() => {
  removeGateRuns();
  for (const k of keys) rmSync(k, { force: true });
});

/** The planner's agent: the adapters' own planner session (what every adapter's twinlock_submit_handoff calls), its answer on stdout. */
const AGENT = `
const { plannerSession } = await import(${JSON.stringify(path.join(REPO_ROOT, "dist", "adapters", "planner-session.js"))});
const { refusalText } = await import(${JSON.stringify(path.join(REPO_ROOT, "dist", "adapters", "planner-session.js"))});
try { console.log(JSON.stringify(await plannerSession({ home: process.env.TWINLOCK_HOME }).submitHandoff())); }
catch (e) { console.log(refusalText(e)); }
`;

describe("a signed-freeze suite's planner freezing through plan's relay", () => {
  for (const confinement of ["--hook-only", "--sandbox"] as const) {
    it.skipIf(confinement === "--sandbox" && !findBubblewrap().ok)(
      `is refused in one line that says how to freeze signed, and nothing is frozen (${confinement})`,
      async () => {
        const { g } = await signingGateRun();
        await startRun(g);
        const agent = path.join(g.dir, "agent.mjs");
        writeFileSync(agent, AGENT);
        const r = spawnSync(
          process.execPath,
          [DIST_BIN, "plan", g.runFile, PLANNER, "--handoff", "handoff", confinement, "--", process.execPath, agent],
          { cwd: g.dir, encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME, TWINLOCK_HOME: homeOf(g).dir } },
        );
        expect(r.status, r.stderr).toBe(0);
        const handoff = realpathSync(g.handoff);
        expect(r.stdout).toBe(
          `twinlock: plan's MCP relay refused twinlock_submit_handoff: UNTRUSTED_RECEIPT: refused: this suite requires signed freezes, and plan's relay holds no freeze key, so the agent cannot freeze MD-29's handoff through it: the person who runs \`twinlock plan\` freezes it with \`twinlock freeze-pair-handoff ${g.runFile} MD-29 --handoff ${handoff} --key FILE\` (a key with the freeze right), or the planner freezes through the gate server with a token made with \`twinlock token create --freeze-key FILE\`\n`,
        );
        expect(workflowOf(g).handoff).toBeNull();
        // The advice holds: the person's own freeze, signed with the planner's key, is taken.
        const keyFile = path.join(g.dir, "..", `${path.basename(g.dir)}-freezer.key`);
        writeFileSync(keyFile, FREEZER.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
        keys.push(keyFile);
        const person = spawnSync(
          process.execPath,
          [DIST_BIN, "freeze-pair-handoff", g.runFile, PLANNER, "--handoff", handoff, "--key", keyFile],
          { cwd: g.dir, encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME, TWINLOCK_HOME: homeOf(g).dir } },
        );
        expect(person.status, person.stderr).toBe(0);
        expect(workflowOf(g).handoff?.hash).toMatch(/^sha256:/);
      },
      120_000,
    );
  }
});
