/*
 * `twinlock exec` and `twinlock hook` as real processes through the built CLI,
 * as an agent tool would run them, for Claude Code, Codex, Gemini CLI and
 * Cursor: each call answered in that tool's own documented deny form.
 */
import { type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_CONTRACTS, AGENTS, type Agent } from "../../src/hook/agent-contracts.js";
import { answerCall } from "../../src/hook/run-hook.js";
import { admitStep, driveTo, type GateRun, makeGateRun, makeRunTempDir, removeGateRuns } from "../../src/test-support/run-fixture.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

const CHILD = path.join(path.dirname(new URL(import.meta.url).pathname), "agent-child.cjs");
const scratch = mkdtempSync(path.join(os.tmpdir(), "twinlock-hook-exec-"));
beforeAll(ensureBuilt, 180_000);
afterAll(() => {
  removeGateRuns();
  rmSync(scratch, { recursive: true, force: true });
});

type Kind = "write" | "edit" | "shell" | "mcp" | "read";

/** Each tool's documented pre-tool-use input for a call of `kind`. */
function fixture(agent: Agent, kind: Kind, file: string, cwd: string): unknown {
  const common = { session_id: "s-1", cwd, transcript_path: "/tmp/t.jsonl" };
  if (agent === "claude" || agent === "codex") {
    const c = { ...common, hook_event_name: "PreToolUse", permission_mode: "default", tool_use_id: "tu-1" };
    if (kind === "write")
      return agent === "codex"
        ? { ...c, tool_name: "apply_patch", tool_input: { command: `*** Begin Patch\n*** Add File: ${file}\n+x\n*** End Patch\n` } }
        : { ...c, tool_name: "Write", tool_input: { file_path: file, content: "x" } };
    if (kind === "edit")
      return agent === "codex"
        ? {
            ...c,
            tool_name: "apply_patch",
            tool_input: { command: `*** Begin Patch\n*** Update File: ${file}\n@@\n-a\n+b\n*** End Patch\n` },
          }
        : { ...c, tool_name: "Edit", tool_input: { file_path: file, old_string: "a", new_string: "b" } };
    if (kind === "shell") return { ...c, tool_name: "Bash", tool_input: { command: "go test ./..." } };
    if (kind === "mcp") return { ...c, tool_name: "mcp__github__create_issue", tool_input: { title: "t" } };
    return { ...c, tool_name: "Read", tool_input: { file_path: file } };
  }
  if (agent === "gemini") {
    const c = { ...common, hook_event_name: "BeforeTool", timestamp: "2026-01-01T00:00:00Z" };
    if (kind === "write") return { ...c, tool_name: "write_file", tool_input: { file_path: file, content: "x" } };
    if (kind === "edit") return { ...c, tool_name: "replace", tool_input: { file_path: file, old_string: "a", new_string: "b" } };
    if (kind === "shell") return { ...c, tool_name: "run_shell_command", tool_input: { command: "go test ./..." } };
    if (kind === "mcp") return { ...c, tool_name: "mcp_github_create_issue", tool_input: { title: "t" } };
    return { ...c, tool_name: "read_file", tool_input: { file_path: file } };
  }
  const c = { conversation_id: "c-1", generation_id: "g-1", hook_event_name: "preToolUse", workspace_roots: [cwd], cwd };
  if (kind === "write") return { ...c, tool_name: "Write", tool_input: { file_path: file, content: "x" } };
  if (kind === "edit") return { ...c, tool_name: "StrReplace", tool_input: { file_path: file, old_string: "a", new_string: "b" } };
  if (kind === "shell") return { ...c, tool_name: "Shell", tool_input: { command: "go test ./...", cwd } };
  if (kind === "mcp") return { ...c, tool_name: "MCP:create_issue", tool_input: { title: "t" } };
  return { ...c, tool_name: "Read", tool_input: { file_path: file } };
}

interface Answer {
  status: number | null;
  stdout: string;
  stderr?: string;
}

/** The answer the tool documents as a deny: JSON on stdout, exit 0. */
function expectDeny(agent: Agent, r: Answer, why?: RegExp): void {
  expect(r.status, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout);
  let reason: string;
  if (agent === "claude" || agent === "codex") {
    expect(out.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    reason = out.hookSpecificOutput.permissionDecisionReason;
  } else if (agent === "gemini") {
    expect(out.decision).toBe("deny");
    reason = out.reason;
  } else {
    expect(out.permission).toBe("deny");
    reason = out.agent_message;
  }
  if (why) expect(reason).toMatch(why);
}

/** The answer that lets a call through without overriding the user's own rules. */
function expectPass(agent: Agent, r: Answer): void {
  expect(r.status, r.stderr).toBe(0);
  if (agent === "claude" || agent === "codex") expect(r.stdout).toBe("");
  else if (agent === "gemini") expect(JSON.parse(r.stdout)).toEqual({});
  else expect(JSON.parse(r.stdout)).toEqual({ permission: "allow" });
}

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TWINLOCK_HOME: process.env.TWINLOCK_HOME, ...extra };
  return env;
}

function hook(agent: Agent, input: unknown, env: NodeJS.ProcessEnv = cleanEnv()): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [DIST_BIN, "hook", agent, "--home", String(process.env.TWINLOCK_HOME)], {
    input: typeof input === "string" ? input : JSON.stringify(input),
    encoding: "utf8",
    env,
  });
}

/** `hook` without waiting: independent calls run side by side. */
function hookAsync(agent: Agent, input: unknown, env: NodeJS.ProcessEnv = cleanEnv()): Promise<Answer> {
  const args = [DIST_BIN, "hook", agent, "--home", String(process.env.TWINLOCK_HOME)];
  return spawnAnswer(process.execPath, args, typeof input === "string" ? input : JSON.stringify(input), env);
}

/** The status and output of `command` given `input` on stdin. */
function spawnAnswer(command: string, args: string[], input: string, env: NodeJS.ProcessEnv): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.stdin.on("error", () => {});
    child.stdin.end(input);
    child.on("error", reject);
    child.on("close", (status) =>
      resolve({ status, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }),
    );
  });
}

/**
 * The answer the hook's process gives `input` (answerCall, as dist/twinlock-hook.cjs runs it), judged in this
 * process with its environment, as the answer a process would show.
 */
function judged(agent: Agent, input: unknown, home = String(process.env.TWINLOCK_HOME)): Answer {
  const text = typeof input === "string" ? input : JSON.stringify(input);
  const a = answerCall(AGENT_CONTRACTS[agent], text, home);
  return { status: a.exitCode, stdout: a.stdout ?? "", stderr: a.stderr };
}

/** Runs `body` with `vars` set in this process's environment, then puts the environment back as it was. */
function withEnv(vars: Record<string, string>, body: () => void): void {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    body();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

interface Seen {
  env: Record<string, string | null>;
  checkout: string[];
  results: Array<Answer & { name: string; agent: Agent }>;
}

/** Run `twinlock exec` on `g` with the stand-in agent following `plan`; what it saw, and exec's own result. */
function execWithPlan(
  g: GateRun,
  plan: unknown[],
  env: NodeJS.ProcessEnv = {},
  /** Start the stand-in through /bin/sh, as an agent CLI's launcher script would (not a bare node script). */
  throughShell = false,
): { exec: SpawnSyncReturns<string>; seen: Seen } {
  const planFile = path.join(g.dir, "plan.json");
  const out = path.join(g.dir, "seen.json");
  writeFileSync(planFile, JSON.stringify(plan));
  // The stand-in agent's own setting is handed on by name: exec passes only its allow-list (and --pass-env) to the command.
  const exec = spawnSync(
    process.execPath,
    [
      DIST_BIN,
      "exec",
      g.runFile,
      "MD-30",
      "--pass-env",
      "AGENT_CHILD_EXIT",
      "--hook-only",
      "--",
      ...(throughShell ? ["/bin/sh", "-c", 'exec "$0" "$@"'] : []),
      process.execPath,
      CHILD,
      DIST_BIN,
      planFile,
      out,
    ],
    {
      cwd: g.dir,
      encoding: "utf8",
      env: { ...cleanEnv(), ...env },
    },
  );
  return { exec, seen: existsSync(out) ? JSON.parse(readFileSync(out, "utf8")) : { env: {}, checkout: [], results: [] } };
}

describe("twinlock hook without an admitted session", () => {
  // As processes: each tool's deny and pass forms, one call of each per tool, all at once. The matrix of every kind
  // of call for every tool is judged in-process below by the same function the hook's process runs (answerCall).
  it("denies a write with no run bound and lets a read through, as a process, in each tool's own form", async () => {
    const answers = await Promise.all(
      AGENTS.flatMap((agent) => [
        hookAsync(agent, fixture(agent, "write", "/tmp/x.go", "/tmp")),
        hookAsync(agent, fixture(agent, "read", "/tmp/x.go", "/tmp")),
      ]),
    );
    AGENTS.forEach((agent, i) => {
      expectDeny(agent, answers[2 * i] as Answer, /no twinlock session is bound/);
      expectPass(agent, answers[2 * i + 1] as Answer);
    });
  });

  it("denies every write, edit, shell and MCP call with no run bound, and lets reads through, for each tool", () => {
    for (const agent of AGENTS) {
      for (const kind of ["write", "edit", "shell", "mcp"] as const)
        expectDeny(agent, judged(agent, fixture(agent, kind, "/tmp/x.go", "/tmp")), /no twinlock session is bound/);
      expectPass(agent, judged(agent, fixture(agent, "read", "/tmp/x.go", "/tmp")));
    }
  });

  it("denies a run not yet admitted even when the env names it", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const session = { TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: "MD-30", TWINLOCK_SESSION: "guess" };
    const write = (agent: Agent) => fixture(agent, "write", path.join(g.dir, "cart/cache.go"), g.dir);
    expectDeny("claude", hook("claude", write("claude"), cleanEnv(session)), /no session of MD-30/);
    withEnv(session, () => {
      for (const agent of AGENTS) expectDeny(agent, judged(agent, write(agent)), /no session of MD-30/);
    });
  });

  it("denies malformed, oversized and duplicate-key stdin, and a missing gate home", () => {
    const session = { TWINLOCK_RUN: "/x/run.json", TWINLOCK_EXECUTOR: "MD-30", TWINLOCK_SESSION: "s" };
    const noHome = path.join(scratch, "no-home");
    expectDeny(
      "claude",
      spawnSync(process.execPath, [DIST_BIN, "hook", "claude", "--home", noHome], {
        input: JSON.stringify(fixture("claude", "write", "/tmp/x", "/tmp")),
        encoding: "utf8",
        env: cleanEnv(session),
      }),
      /cannot be read/,
    );
    for (const agent of AGENTS) {
      expectDeny(agent, judged(agent, "{not json"), /not JSON/);
      expectDeny(agent, judged(agent, '{"tool_name":"Read","tool_name":"Write","tool_input":{}}'), /twice/);
      expectDeny(agent, judged(agent, "[]"), /not a JSON object/);
      withEnv(session, () => expectDeny(agent, judged(agent, fixture(agent, "write", "/tmp/x", "/tmp"), noHome), /cannot be read/));
    }
    // Stdin past the budget: the bound session's test sends it through a process, whose stdin read stops at the limit.
    expectDeny(
      "claude",
      judged("claude", `{"tool_name":"Write","tool_input":{"content":"${"a".repeat(17 * 1024 * 1024)}"}}`),
      /over the 16,777,216-byte limit for a hook input/,
    );
  });

  it("takes the gate home only from its own --home, never from TWINLOCK_HOME, XDG_STATE_HOME or HOME the agent can shape", async () => {
    const fake = path.join(scratch, "agent-made-home");
    mkdirSync(path.join(fake, "bindings"), { recursive: true });
    const input = fixture("claude", "write", "/etc/passwd", "/tmp");
    const session = { TWINLOCK_RUN: path.join(scratch, "run.json"), TWINLOCK_EXECUTOR: "MD-30", TWINLOCK_SESSION: "s".repeat(64) };
    const forged = cleanEnv({ ...session, TWINLOCK_HOME: fake, XDG_STATE_HOME: fake, HOME: fake });
    const [bare, named] = await Promise.all([
      spawnAnswer(process.execPath, [DIST_BIN, "hook", "claude"], JSON.stringify(input), forged),
      hookAsync("claude", input, forged),
    ]);
    expectDeny("claude", bare, /names no gate home/);
    expectDeny(
      "claude",
      named,
      new RegExp(`bound in gate home ${String(process.env.TWINLOCK_HOME).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    );
  });

  // The hook's own deadline, for each tool, is test/hook/run-hook-deadline.test.ts; the bound session's test below
  // holds it inside an exec too.

  it("ignores a NODE_OPTIONS preload when run as installed (env -u NODE_OPTIONS), and denies when NODE_OPTIONS reaches it", async () => {
    const evil = path.join(scratch, "evil.cjs");
    writeFileSync(
      evil,
      `process.stdout.write('{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'); process.exit(0);\n`,
    );
    const env = cleanEnv({ NODE_OPTIONS: `--require=${evil}` });
    const input = JSON.stringify(fixture("claude", "write", "/tmp/x", "/tmp"));
    const [preloaded, installed, reached] = await Promise.all([
      // What the preload would do to a bare `node` start: the reason the installed command clears NODE_OPTIONS.
      spawnAnswer(process.execPath, [DIST_BIN, "hook", "claude"], input, env),
      spawnAnswer(
        "env",
        ["-u", "NODE_OPTIONS", process.execPath, DIST_BIN, "hook", "claude", "--home", String(process.env.TWINLOCK_HOME)],
        input,
        env,
      ),
      hookAsync("claude", input, cleanEnv({ NODE_OPTIONS: "--max-old-space-size=256" })),
    ]);
    expect(preloaded.stdout).toContain('"allow"');
    expectDeny("claude", installed, /no twinlock session/);
    expectDeny("claude", reached, /NODE_OPTIONS is set/);
  });
});

describe("twinlock exec", () => {
  it("does not say that no agent CLI has a hook when the command is a node script (an SDK agent asks through its adapter)", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const home = makeRunTempDir("twinlock-exec-user-");
    const { exec } = execWithPlan(g, [], { AGENT_CHILD_EXIT: "0", HOME: home });
    expect(exec.status, exec.stderr).toBe(0);
    expect(exec.stderr).not.toMatch(/no twinlock hook is installed/);
  });

  it("runs the command with the session's variables, the checkout and no NODE_OPTIONS, and passes on its status", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    // A home of its own: no agent tool's user settings, so no hook anywhere, and exec says so.
    const home = makeRunTempDir("twinlock-exec-user-");
    const { exec, seen } = execWithPlan(g, [], { NODE_OPTIONS: "--max-old-space-size=256", AGENT_CHILD_EXIT: "7", HOME: home }, true);
    expect(exec.status, exec.stderr).toBe(7);
    expect(exec.stderr).toMatch(/no twinlock hook is installed here for any agent tool \(`twinlock hooks status`\)/);
    expect(seen.env.TWINLOCK_RUN).toBe(g.runFile);
    expect(seen.env.TWINLOCK_EXECUTOR).toBe("MD-30");
    expect(seen.env.NODE_OPTIONS).toBeNull();
    expect(seen.checkout).toEqual([
      "acceptance_criteria.json",
      "action_plan.json",
      "evidence_index.json",
      "finding_register.json",
      "report.md",
    ]);
    expect(existsSync(seen.env.TWINLOCK_HANDOFF as string)).toBe(false);
    expect(exec.stderr).toMatch(/exited with status 7; recorded in .*exec-results/);
  });

  it("never starts the command when admission fails: exit 3 and the !STOP line", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    const marker = path.join(g.dir, "started");
    const r = spawnSync(
      process.execPath,
      [
        DIST_BIN,
        "exec",
        g.runFile,
        "MD-30",
        "--hook-only",
        "--",
        process.execPath,
        "-e",
        `require("fs").writeFileSync(${JSON.stringify(marker)}, "x")`,
      ],
      {
        cwd: g.dir,
        encoding: "utf8",
        env: cleanEnv(),
      },
    );
    expect(r.status).toBe(3);
    expect(r.stdout).toContain("!STOP:invalid-reviewed-handoff-or-exact-twin-consent");
    expect(existsSync(marker)).toBe(false);
  });

  it("passes SIGTERM on to the command", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const ready = path.join(g.dir, "ready");
    const got = path.join(g.dir, "got");
    const script = `const fs=require("fs");process.on("SIGTERM",()=>{fs.writeFileSync(${JSON.stringify(got)},"SIGTERM");process.exit(0)});fs.writeFileSync(${JSON.stringify(ready)},"");setInterval(()=>{},1000);`;
    const child = spawn(process.execPath, [DIST_BIN, "exec", g.runFile, "MD-30", "--hook-only", "--", process.execPath, "-e", script], {
      cwd: g.dir,
      env: cleanEnv(),
      stdio: "ignore",
    });
    const status = await new Promise<number | null>((resolve) => {
      const poll = setInterval(() => {
        if (existsSync(ready)) {
          clearInterval(poll);
          child.kill("SIGTERM");
        }
      }, 50);
      child.on("exit", (code) => {
        clearInterval(poll);
        resolve(code);
      });
    });
    expect(readFileSync(got, "utf8")).toBe("SIGTERM");
    expect(status).toBe(0);
  });
});

describe("twinlock hook in a session bound by exec", () => {
  // Each tool's pass and deny forms through a bound session, as processes (about 30, a few at a time); the kinds of
  // call each tool names (edit, shell, MCP) and the paths out of the plan are judged in-process, with a binding, in
  // src/hook/decide-tool-call.test.ts and src/hook/agent-contracts.test.ts, so each is sent once here, by Claude's form.
  it("lets the admitted executor write its targets, run commands and call MCP, and denies what the plan does not cover", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const other = makeGateRun();
    await driveTo(other, "dry_run_ready");
    await admitStep(other);
    const target = path.join(g.dir, "cart", "cache.go");
    const plan: unknown[] = [];
    for (const agent of AGENTS) {
      for (const kind of ["write", "read"] as const)
        plan.push({ name: `${kind} in scope`, agent, input: fixture(agent, kind, target, g.dir) });
      plan.push({ name: "outside the plan", agent, input: fixture(agent, "write", path.join(g.dir, "cart", "other.go"), g.dir) });
    }
    for (const kind of ["edit", "shell", "mcp"] as const)
      plan.push({ name: `${kind} in scope`, agent: "claude", input: fixture("claude", kind, target, g.dir) });
    plan.push({
      name: "dot-dot escape",
      agent: "claude",
      input: fixture("claude", "write", path.join(g.dir, "cart", "..", "..", "etc-passwd"), g.dir),
    });
    plan.push({
      name: "forged run",
      agent: "claude",
      input: fixture("claude", "write", target, g.dir),
      env: { TWINLOCK_RUN: other.runFile },
    });
    plan.push({
      name: "timeout",
      agent: "claude",
      input: fixture("claude", "write", target, g.dir),
      env: { TWINLOCK_HOOK_TEST_STALL: "1", TWINLOCK_HOOK_TIMEOUT_MS: "300" },
    });
    plan.push({ name: "malformed", agent: "claude", stdin: "{" });
    plan.push({ name: "casing", agent: "claude", input: { tool_name: "write", tool_input: { file_path: target } } });
    plan.push({ name: "trailing space", agent: "claude", input: { tool_name: "Write ", tool_input: { file_path: target } } });
    plan.push({ name: "unknown tool", agent: "claude", input: { tool_name: "DeleteEverything", tool_input: {} } });
    plan.push({ name: "huge", agent: "claude", huge: true });
    const outside = path.join(scratch, "outside-target");
    plan.push({ symlink: [outside, path.join(g.dir, "cart", "cache_race_test.go")] });
    plan.push({
      name: "symlink escape",
      agent: "claude",
      input: fixture("claude", "write", path.join(g.dir, "cart", "cache_race_test.go"), g.dir),
    });
    plan.push({ editCheckout: "report.md" });
    for (const agent of AGENTS) plan.push({ name: "checkout edited", agent, input: fixture(agent, "write", target, g.dir) });
    const { exec, seen } = execWithPlan(g, plan);
    expect(exec.status, exec.stderr).toBe(0);
    const by = (name: string, agent: Agent) => seen.results.find((r) => r.name === name && r.agent === agent) as Answer;
    for (const agent of AGENTS) {
      for (const kind of ["write", "read"]) expectPass(agent, by(`${kind} in scope`, agent));
      expectDeny(agent, by("outside the plan", agent), /outside the admitted plan's targets/);
      expectDeny(agent, by("checkout edited", agent), /was edited since it was approved/);
    }
    for (const kind of ["edit", "shell", "mcp"]) expectPass("claude", by(`${kind} in scope`, "claude"));
    expectDeny("claude", by("dot-dot escape", "claude"), /outside the admitted plan's targets/);
    expectDeny("claude", by("forged run", "claude"), /no session of MD-30/);
    expectDeny("claude", by("timeout", "claude"), /did not decide/);
    expectDeny("claude", by("malformed", "claude"), /not JSON/);
    expectDeny("claude", by("casing", "claude"), /not a tool the twinlock hook knows/);
    expectDeny("claude", by("trailing space", "claude"), /not a tool the twinlock hook knows/);
    expectDeny("claude", by("unknown tool", "claude"), /not a tool the twinlock hook knows/);
    expectDeny("claude", by("huge", "claude"), /larger than/);
    expectDeny("claude", by("symlink escape", "claude"), /outside the admitted plan's targets/);
    // The session ended with exec: the same call is denied again.
    const env = cleanEnv({ TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: "MD-30", TWINLOCK_SESSION: seen.env.TWINLOCK_SESSION as string });
    expectDeny("claude", hook("claude", fixture("claude", "write", target, g.dir), env), /no session of MD-30/);
  }, 240_000);

  it("denies writes through an admitted target the agent made a symbolic link before exec (cart/cache.go -> ..), and exec says why", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const target = path.join(g.dir, "cart", "cache.go");
    mkdirSync(path.dirname(target), { recursive: true });
    rmSync(target, { force: true });
    // Planted in the agent's own tree: the target the reviewer approved would otherwise cover the whole project.
    symlinkSync("..", target);
    const plan: unknown[] = [];
    for (const agent of AGENTS) {
      plan.push({ name: "git hook", agent, input: fixture(agent, "write", path.join(g.dir, ".git", "hooks", "pre-commit"), g.dir) });
      plan.push({ name: "agent settings", agent, input: fixture(agent, "write", path.join(g.dir, ".claude", "settings.json"), g.dir) });
    }
    const { exec, seen } = execWithPlan(g, plan);
    expect(exec.status, exec.stderr).toBe(0);
    expect(exec.stderr).toMatch(/action A2's target cart\/cache\.go goes through a symbolic link to .*; it scopes no file/);
    for (const agent of AGENTS)
      for (const name of ["git hook", "agent settings"])
        expectDeny(agent, seen.results.find((r) => r.name === name && r.agent === agent) as Answer, /outside the admitted plan's targets/);
  });

  it("denies a process outside the exec that copied the session's variables", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const envFile = path.join(g.dir, "env.json");
    const go = path.join(g.dir, "go");
    const script = `const fs=require("fs");fs.writeFileSync(${JSON.stringify(envFile)},JSON.stringify(process.env));const t=setInterval(()=>{if(fs.existsSync(${JSON.stringify(go)})){clearInterval(t)}},50);`;
    const child = spawn(process.execPath, [DIST_BIN, "exec", g.runFile, "MD-30", "--hook-only", "--", process.execPath, "-e", script], {
      cwd: g.dir,
      env: cleanEnv(),
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    while (!existsSync(envFile)) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 100));
    const copied = JSON.parse(readFileSync(envFile, "utf8"));
    const r = hook(
      "claude",
      fixture("claude", "write", path.join(g.dir, "cart", "cache.go"), g.dir),
      cleanEnv({
        TWINLOCK_RUN: copied.TWINLOCK_RUN,
        TWINLOCK_EXECUTOR: copied.TWINLOCK_EXECUTOR,
        TWINLOCK_SESSION: copied.TWINLOCK_SESSION,
      }),
    );
    writeFileSync(go, "");
    await exited;
    expectDeny("claude", r, /does not come from below the exec process/);
  });
});
