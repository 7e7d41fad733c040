/*
 * `twinlock plan` and `twinlock exec` as real processes through the built CLI:
 * the planner's session held to its handoff folder, the allow-listed
 * environment, a binding that dies with its process (a SIGKILLed exec), and
 * exec on a team (PostgreSQL) store held like one on the folder store.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../../src/demo/demo-handoff.js";
import { consentPairExecution } from "../../src/gate/consent-pair-execution.js";
import { freezePairHandoff } from "../../src/gate/freeze-pair-handoff.js";
import { raiseStop } from "../../src/gate/hard-stops.js";
import { initRun } from "../../src/gate/init-run.js";
import { reviewPairPlan } from "../../src/gate/review-pair-plan.js";
import { openGateHome } from "../../src/home/gate-home.js";
import { pinSuite } from "../../src/home/suite-pins.js";
import { removeDeadSessionTempDirs } from "../../src/sandbox/session-temp-folder.js";
import { migratePostgres, type PostgresRunStore, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import {
  driveTo,
  EXECUTOR,
  makeGateRun,
  makeRunTempDir,
  PLANNER,
  RUN_EXAMPLE_SUITE,
  removeGateRuns,
  TEST_PINNER,
} from "../../src/test-support/run-fixture.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

const CHILD = path.join(path.dirname(new URL(import.meta.url).pathname), "session-child.cjs");
const MCP_CHILD = path.join(path.dirname(new URL(import.meta.url).pathname), "mcp-session-child.cjs");
const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
beforeAll(ensureBuilt, 180_000);
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const f of cleanups.splice(0).reverse()) await f();
});
afterAll(removeGateRuns);
// An exec killed by SIGKILL cannot remove its own session folders: the next session would, and so does this file.
afterAll(() => removeDeadSessionTempDirs());

interface Answer {
  name: string;
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A Claude Code call of the hook's: a deny carries its reason, a pass is silence. */
function denied(r: Answer | undefined): string | undefined {
  expect(r, "the step ran").toBeDefined();
  const a = r as Answer;
  expect(a.status, a.stderr).toBe(0);
  if (a.stdout === "") return undefined;
  const out = JSON.parse(a.stdout);
  expect(out.hookSpecificOutput.permissionDecision).toBe("deny");
  return out.hookSpecificOutput.permissionDecisionReason as string;
}

function claude(name: string, tool: string, input: Record<string, unknown>, cwd: string) {
  return { name, agent: "claude", input: { hook_event_name: "PreToolUse", tool_name: tool, tool_input: input, cwd } };
}

function baseEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, TWINLOCK_HOME: home, ...extra };
}

/** Run twinlock (`args`) with the stand-in agent following `plan`; its result and what the agent saw. */
function runWithChild(args: string[], plan: unknown[], o: { cwd: string; env: NodeJS.ProcessEnv }) {
  const dir = makeRunTempDir("twinlock-session-child-");
  const planFile = path.join(dir, "plan.json");
  const out = path.join(dir, "seen.json");
  writeFileSync(planFile, JSON.stringify(plan));
  const r = spawnSync(process.execPath, [DIST_BIN, ...args, "--hook-only", "--", process.execPath, CHILD, DIST_BIN, planFile, out], {
    cwd: o.cwd,
    encoding: "utf8",
    env: o.env,
  });
  const results: Answer[] = existsSync(out) ? JSON.parse(readFileSync(out, "utf8")) : [];
  const env: Record<string, string> = existsSync(`${out}.env.json`) ? JSON.parse(readFileSync(`${out}.env.json`, "utf8")) : {};
  return { r, by: (name: string) => results.find((x) => x.name === name), env };
}

async function waitFor(what: () => boolean): Promise<void> {
  while (!what()) await new Promise((r) => setTimeout(r, 50));
}

describe("twinlock plan", () => {
  it("runs the command in the planner's session: its handoff folder, read-only commands and twinlock's MCP tools only, then unbinds", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const handoff = realpathSync(g.handoff);
    const target = path.join(g.dir, "cart", "cache.go");
    const plan = [
      claude("write handoff", "Write", { file_path: path.join(handoff, "report.md"), content: "x" }, g.dir),
      claude("write target", "Write", { file_path: target, content: "x" }, g.dir),
      claude("write run file", "Edit", { file_path: g.runFile, old_string: "a", new_string: "b" }, g.dir),
      claude("read-only shell", "Bash", { command: "git status 2>&1 | head -n 5; ls -la handoff" }, g.dir),
      claude("writing shell", "Bash", { command: "sed -i 's/a/b/' cart/cache.go" }, g.dir),
      claude("pager trick", "Bash", { command: "git -c core.pager='touch pwned' log" }, g.dir),
      claude("freeze", "mcp__twinlock__twinlock_submit_handoff", { planner: PLANNER }, g.dir),
      claude("other mcp", "mcp__github__create_issue", { title: "t" }, g.dir),
      claude("report result", "mcp__twinlock__twinlock_report_result", { planner: PLANNER }, g.dir),
      { ...claude("as executor", "Write", { file_path: path.join(handoff, "x.md") }, g.dir), env: { TWINLOCK_EXECUTOR: EXECUTOR } },
    ];
    const { r, by, env } = runWithChild(["plan", g.runFile, PLANNER, "--handoff", "handoff", "--pass-env", "AGENT_CHILD_EXIT"], plan, {
      cwd: g.dir,
      env: baseEnv(g.home, {
        TWINLOCK_KEY: "/home/alice/keys/alice.key",
        TWINLOCK_ACTOR: "alice",
        NODE_OPTIONS: "--max-old-space-size=256",
        AGENT_CHILD_EXIT: "5",
      }),
    });
    expect(r.status, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/MD-29's planner session is bound/);
    expect(denied(by("write handoff"))).toBeUndefined();
    expect(denied(by("write target"))).toMatch(/outside the planner's handoff folder/);
    expect(denied(by("write run file"))).toMatch(/outside the planner's handoff folder/);
    expect(denied(by("read-only shell"))).toBeUndefined();
    expect(denied(by("writing shell"))).toMatch(/takes only/);
    expect(denied(by("pager trick"))).toMatch(/no global option/);
    expect(denied(by("freeze"))).toBeUndefined();
    expect(denied(by("other mcp"))).toMatch(/only twinlock's own MCP tools/);
    expect(denied(by("report result"))).toMatch(/only twinlock's own MCP tools/);
    expect(denied(by("as executor"))).toMatch(/both TWINLOCK_EXECUTOR and TWINLOCK_PLANNER/);
    // The environment: the session's own variables, and nothing of the invoker's that is not allow-listed.
    expect(env).toMatchObject({ TWINLOCK_RUN: g.runFile, TWINLOCK_PLANNER: PLANNER, TWINLOCK_HANDOFF: handoff, TWINLOCK_HOME: g.home });
    for (const name of ["TWINLOCK_KEY", "TWINLOCK_ACTOR", "TWINLOCK_STORE", "NODE_OPTIONS", "TWINLOCK_EXECUTOR"])
      expect(env[name], name).toBeUndefined();
    // After the command: no binding is left, and the same call is denied.
    expect(readdirSync(path.join(g.home, "bindings"))).toEqual([]);
    const again = spawnSync(process.execPath, [DIST_BIN, "hook", "claude", "--home", g.home], {
      input: JSON.stringify(plan[0]?.input),
      encoding: "utf8",
      env: baseEnv(g.home, {
        TWINLOCK_RUN: env.TWINLOCK_RUN ?? "",
        TWINLOCK_PLANNER: PLANNER,
        TWINLOCK_SESSION: env.TWINLOCK_SESSION ?? "",
      }),
    });
    expect(denied({ name: "again", status: again.status, stdout: again.stdout, stderr: again.stderr })).toMatch(
      /no session of planner MD-29/,
    );
  }, 120_000);

  it.skipIf(process.platform !== "linux")(
    "hides its own arguments (a store URL's password, say) from the agent, which could read its parent's /proc/PID/cmdline",
    async () => {
      const g = makeGateRun();
      await driveTo(g, "investigating");
      const seen = path.join(g.dir, "parent-cmdline");
      const r = spawnSync(
        process.execPath,
        [
          DIST_BIN,
          "plan",
          g.runFile,
          PLANNER,
          "--handoff",
          "handoff",
          "--home",
          g.home,
          "--hook-only",
          "--",
          process.execPath,
          "-e",
          `require("fs").writeFileSync(${JSON.stringify(seen)}, require("fs").readFileSync("/proc/" + process.ppid + "/cmdline"))`,
        ],
        { cwd: g.dir, encoding: "utf8", env: baseEnv(g.home) },
      );
      expect(r.status, r.stderr).toBe(0);
      const cmdline = readFileSync(seen, "utf8").replaceAll("\0", " ").trim();
      expect(cmdline).toBe("twinlock plan");
      expect(cmdline).not.toContain(g.home);
    },
    60_000,
  );

  it("refuses a command line with nothing after --, and a handoff folder holding the project, before anything runs", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const none = spawnSync(process.execPath, [DIST_BIN, "plan", g.runFile, PLANNER, "--handoff", "handoff"], {
      cwd: g.dir,
      encoding: "utf8",
      env: baseEnv(g.home),
    });
    expect(none.status).toBe(2);
    const marker = path.join(g.dir, "started");
    const wide = spawnSync(
      process.execPath,
      [
        DIST_BIN,
        "plan",
        g.runFile,
        PLANNER,
        "--handoff",
        ".",
        "--hook-only",
        "--",
        process.execPath,
        "-e",
        `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`,
      ],
      { cwd: g.handoff, encoding: "utf8", env: baseEnv(g.home) },
    );
    expect(wide.status).toBe(1);
    expect(wide.stderr).toMatch(/holds the folder the session is started in/);
    expect(wide.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});

describe("a binding left behind by a killed exec", () => {
  it("is refused: the agent's hook calls after exec died by SIGKILL are denied, though the binding file is still there", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const dir = makeRunTempDir("twinlock-killed-exec-");
    const ready = path.join(dir, "ready");
    const go = path.join(dir, "go");
    const target = path.join(g.dir, "cart", "cache.go");
    const plan = [
      claude("before", "Write", { file_path: target, content: "x" }, g.dir),
      { touch: ready },
      { waitFor: go },
      claude("after", "Write", { file_path: target, content: "x" }, g.dir),
    ];
    const planFile = path.join(dir, "plan.json");
    const out = path.join(dir, "seen.json");
    writeFileSync(planFile, JSON.stringify(plan));
    const exec = spawn(
      process.execPath,
      [
        DIST_BIN,
        "exec",
        g.runFile,
        EXECUTOR,
        "--checkout",
        path.join(dir, "checkout"),
        "--hook-only",
        "--",
        process.execPath,
        CHILD,
        DIST_BIN,
        planFile,
        out,
      ],
      {
        cwd: g.dir,
        env: baseEnv(g.home),
        stdio: "ignore",
      },
    );
    children.push(exec);
    const exited = new Promise((resolve) => exec.on("exit", resolve));
    await waitFor(() => existsSync(ready));
    exec.kill("SIGKILL");
    await exited;
    expect(readdirSync(path.join(g.home, "bindings")).length).toBe(1);
    writeFileSync(go, "");
    await waitFor(() => existsSync(out) && (JSON.parse(readFileSync(out, "utf8")) as Answer[]).length === 2);
    const results = JSON.parse(readFileSync(out, "utf8")) as Answer[];
    expect(denied(results[0])).toBeUndefined();
    expect(denied(results[1])).toMatch(/does not come from below the exec process|has ended|not the exec that bound/);
  }, 120_000);
});

/** A migrated team database with the example suite pinned, a gate home folder for this machine, and a run `ref` in it. */
async function teamRun(ref: string) {
  const db = await freshPostgresDatabase("twinlock_exec");
  cleanups.push(db.drop);
  await migratePostgres(db.url);
  const root = makeRunTempDir("twinlock-team-exec-");
  const home = path.join(root, "home");
  const store: PostgresRunStore = postgresRunStore(db.url, openGateHome(home, { create: true }));
  cleanups.push(() => store.close());
  await pinSuite(store.home, { suiteDir: RUN_EXAMPLE_SUITE, allowUnsigned: true, key: TEST_PINNER });
  const project = path.join(root, "project");
  const handoff = path.join(project, "agent-work", "handoff");
  mkdirSync(path.join(project, "cart"), { recursive: true });
  writeDemoHandoff(handoff, demoHandoffRecords());
  await initRun({
    run: ref,
    store,
    suiteRoot: RUN_EXAMPLE_SUITE,
    planners: [PLANNER],
    mode: "APPLY_SAFE",
    environment: "staging",
    actions: "all",
    budget: null,
    actor: "alice",
  });
  return { url: db.url, home, store, project, handoff };
}

/**
 * Start twinlock (`args`) on a team store with the stand-in agent: it runs
 * `before`, waits while a person raises a stop through the database and the
 * session's binding leaves the gate home, then runs `after`. What it saw.
 */
async function aroundAStop(t: Awaited<ReturnType<typeof teamRun>>, ref: string, args: string[], before: unknown[], after: unknown[]) {
  const dir = makeRunTempDir("twinlock-team-exec-child-");
  const ready = path.join(dir, "ready");
  const go = path.join(dir, "go");
  const planFile = path.join(dir, "plan.json");
  const out = path.join(dir, "seen.json");
  writeFileSync(planFile, JSON.stringify([...before, { touch: ready }, { waitFor: go }, ...after]));
  const stderr: Buffer[] = [];
  const child = spawn(
    process.execPath,
    [DIST_BIN, ...args, "--home", t.home, "--hook-only", "--", process.execPath, CHILD, DIST_BIN, planFile, out],
    {
      cwd: t.project,
      env: baseEnv(t.home, { TWINLOCK_STORE: t.url }),
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  children.push(child);
  child.stderr?.on("data", (b: Buffer) => stderr.push(b));
  const status = new Promise<number | null>((resolve) => child.on("exit", resolve));
  await waitFor(() => existsSync(ready) || child.exitCode !== null);
  expect(existsSync(ready), Buffer.concat(stderr).toString()).toBe(true);
  const bindings = path.join(t.home, "bindings");
  expect(readdirSync(bindings).length).toBe(1);
  // A person stops the run through the database (another server, say): the binder's re-check ends the session.
  await raiseStop({ store: t.store, run: ref, reason: "halt", actor: "bob" });
  await waitFor(() => readdirSync(bindings).length === 0);
  writeFileSync(go, "");
  const code = await status;
  const results = JSON.parse(readFileSync(out, "utf8")) as Answer[];
  const env = JSON.parse(readFileSync(`${out}.env.json`, "utf8")) as Record<string, string>;
  return { code, by: (name: string) => results.find((x) => x.name === name), env, stderr: Buffer.concat(stderr).toString() };
}

describe.skipIf(!TEST_POSTGRES)("sessions on a team (PostgreSQL) store", () => {
  it("exec binds the session in the gate home the hook reads, holds the executor to its plan, and ends it when a stop is raised", async () => {
    const ref = "team/exec";
    const t = await teamRun(ref);
    const frozen = await freezePairHandoff({ store: t.store, run: ref, planner: PLANNER, handoffDir: t.handoff, actor: "planner-agent" });
    await reviewPairPlan({ store: t.store, run: ref, planner: PLANNER, decision: "approved", handoffHash: frozen.hash, reviewer: "alice" });
    await consentPairExecution({ store: t.store, run: ref, planner: PLANNER, approve: true, handoffHash: frozen.hash, user: "alice" });
    const target = path.join(t.project, "cart", "cache.go");
    const { code, by, env, stderr } = await aroundAStop(
      t,
      ref,
      ["exec", ref, EXECUTOR],
      [
        claude("target", "Write", { file_path: target, content: "x" }, t.project),
        claude("outside", "Write", { file_path: path.join(t.project, "cart", "other.go"), content: "x" }, t.project),
        claude("mcp", "mcp__github__create_issue", { title: "t" }, t.project),
      ],
      [claude("after the stop", "Write", { file_path: target, content: "x" }, t.project)],
    );
    expect(code, stderr).toBe(0);
    expect(denied(by("target"))).toBeUndefined();
    expect(denied(by("outside"))).toMatch(/outside the admitted plan's targets/);
    expect(denied(by("mcp"))).toBeUndefined();
    expect(denied(by("after the stop"))).toMatch(/no session of MD-30/);
    expect(stderr).toMatch(/the session of MD-30 ended: run run_[0-9a-f]{16} was written since/);
    expect(env.TWINLOCK_RUN).toMatch(/^run_[0-9a-f]{16}$/);
    expect(env.TWINLOCK_STORE).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain(t.url);
  }, 180_000);

  it("plan binds the planner's session there too: its handoff folder only, until a stop is raised", async () => {
    const ref = "team/plan";
    const t = await teamRun(ref);
    const { code, by, env, stderr } = await aroundAStop(
      t,
      ref,
      ["plan", ref, PLANNER, "--handoff", t.handoff],
      [
        claude("handoff", "Write", { file_path: path.join(t.handoff, "report.md"), content: "x" }, t.project),
        claude("target", "Write", { file_path: path.join(t.project, "cart", "cache.go"), content: "x" }, t.project),
      ],
      [claude("after the stop", "Write", { file_path: path.join(t.handoff, "report.md"), content: "x" }, t.project)],
    );
    expect(code, stderr).toBe(0);
    expect(denied(by("handoff"))).toBeUndefined();
    expect(denied(by("target"))).toMatch(/outside the planner's handoff folder/);
    expect(denied(by("after the stop"))).toMatch(/no session of planner MD-29/);
    expect(stderr).toMatch(/the session of planner MD-29 ended: !STOP:halt was raised on the run/);
    expect(env.TWINLOCK_PLANNER).toBe(PLANNER);
  }, 180_000);

  it("plan relays the planner's MCP calls to a server of its own: the agent freezes and waits for a person's decision holding no store URL or key, and cannot freeze another planner", async () => {
    const ref = "team/plan-mcp";
    const t = await teamRun(ref);
    const dir = makeRunTempDir("twinlock-team-plan-mcp-");
    const frozen = path.join(dir, "frozen");
    const planFile = path.join(dir, "plan.json");
    const out = path.join(dir, "seen.json");
    const call = (name: string, tool: string, args: Record<string, unknown>, until?: string) => ({ name, tool, arguments: args, until });
    writeFileSync(
      planFile,
      JSON.stringify([
        call("other planner", "twinlock_submit_handoff", { planner: "MD-41", handoff_dir: t.handoff }),
        call("freeze", "twinlock_submit_handoff", { planner: PLANNER }),
        { touch: frozen },
        call("wait", "twinlock_wait_for_review", { planner: PLANNER, timeout_seconds: 5 }, "waiting"),
      ]),
    );
    const stderr: Buffer[] = [];
    const child = spawn(
      process.execPath,
      [
        DIST_BIN,
        "plan",
        ref,
        PLANNER,
        "--handoff",
        t.handoff,
        "--home",
        t.home,
        "--hook-only",
        "--",
        process.execPath,
        MCP_CHILD,
        DIST_BIN,
        planFile,
        out,
      ],
      {
        cwd: t.project,
        env: baseEnv(t.home, { TWINLOCK_STORE: t.url, TWINLOCK_KEY: "/home/alice/keys/alice.key" }),
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    children.push(child);
    child.stderr?.on("data", (b: Buffer) => stderr.push(b));
    const status = new Promise<number | null>((resolve) => child.on("exit", resolve));
    await waitFor(() => existsSync(frozen) || child.exitCode !== null);
    expect(existsSync(frozen), Buffer.concat(stderr).toString()).toBe(true);
    // A person reviews the frozen plan through the database (their own twinlock, or the gate server).
    const wf = (await t.store.read(ref)).state.workflows[PLANNER];
    expect(wf?.revision).toBe(1);
    await reviewPairPlan({
      store: t.store,
      run: ref,
      planner: PLANNER,
      decision: "approved",
      handoffHash: wf?.handoff?.hash as string,
      reviewer: "alice",
    });
    expect(await status, Buffer.concat(stderr).toString()).toBe(0);
    const results = JSON.parse(readFileSync(out, "utf8")) as Array<{
      name: string;
      answer: { isError?: boolean; content: Array<{ text: string }> };
    }>;
    const text = (name: string) => results.find((r) => r.name === name)?.answer.content[0]?.text;
    expect(text("other planner")).toBe(
      "TOKEN_PAIR: this session is for MD-29, not MD-41; a person who keeps the gate home can grant a token for that pair",
    );
    expect(text("freeze")).toMatch(/^froze revision 1 of MD-29: sha256:[0-9a-f]{64}/);
    expect(text("wait")).toMatch(/^approved on revision 1 by alice/);
    // The agent held neither the store's URL nor the key's path: only the relay's socket.
    const env = JSON.parse(readFileSync(`${out}.env.json`, "utf8")) as Record<string, string>;
    for (const name of ["TWINLOCK_STORE", "TWINLOCK_KEY"]) expect(env[name], name).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain(t.url);
    expect(JSON.stringify(env)).not.toContain("alice.key");
    expect(env.TWINLOCK_MCP_SOCKET).toMatch(/mcp\.sock$/);
    expect(existsSync(env.TWINLOCK_MCP_SOCKET as string), "the relay is closed with the session").toBe(false);
  }, 180_000);
});
