import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isAgentVariable } from "../../src/cli/agent-environment.js";
import { geminiProject } from "../../src/sandbox/tool-state.js";
import { DIST_BIN } from "../support/ensure-built.js";
import { type AdmittedProject, admittedProject, type PlannerProject, plannerProject } from "./admitted-run.js";
import { AGENT_CLIS, type RealAgent, type RunDirs } from "./agent-clis.js";
import { type RecordedRequest, startModelServer } from "./model-server.js";
import { type AnyActionKind, actionOf, EDIT_BEFORE, type OutwardTool, type ScriptedAction } from "./scripted-action.js";

/**
 * How the twinlock hook stands in a run:
 * - `uninstalled`: no hook in the tool's config (proves the harness);
 * - `installed`: `twinlock hooks install --agent X --project`, the real hook, no session bound;
 * - `not-found`: installed, but the node binary its command names is gone (the shell exits 127);
 * - `killed`: installed, and the hook dies by SIGKILL before it answers;
 * - `timed-out`: installed, and the hook answers nothing until past the installed timeout.
 * The last three run the installed command with its node binary replaced by a stand-in that fails so.
 */
export type HookState = "uninstalled" | "installed" | "not-found" | "killed" | "timed-out";

/** Where a run under exec acts: an admitted target, a file of the project outside them, or the hook's own config in the project. */
export type ExecOn = "target" | "outside" | "hook-config";

/** How Codex comes to run the project's hook: not at all (untrusted), `--dangerously-bypass-hook-trust`, or `hooks install --trust`. */
export type CodexTrust = "none" | "bypass" | "twinlock";

/** What one headless run of an agent CLI did. */
export interface AgentRun {
  agent: RealAgent;
  hook: HookState;
  trust: CodexTrust;
  /** Under exec: whether the file is an admitted target, outside them, or the project's hook config; undefined when the CLI ran on its own. */
  exec: ExecOn | undefined;
  /** Under plan: whether the file is in the planner's handoff folder or an action target outside it; undefined otherwise. */
  plan: "handoff" | "target" | undefined;
  /** The file's content before the run (null: it did not exist). */
  before: string | null;
  action: ScriptedAction;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** The target file's content after the run, or null when it does not exist. */
  fileAfter: string | null;
  /** One line per time the agent tool started the failing stand-in (not-found, killed, timed-out), with its arguments. */
  hookCalls: string[];
  requests: RecordedRequest[];
  /** The tool results the CLI sent back to the scripted model. */
  toolResults: string[];
}

/**
 * A folder of each tool's state folder that exec's sandbox leaves writable (src/sandbox/tool-state.ts), for a session
 * in `project`: Gemini CLI's `tmp` is private to the session but the project's chats and logs.
 */
const HOOK_LOG_FOLDER: Record<RealAgent, (state: string, project: string) => string> = {
  claude: () => "debug",
  codex: () => "log",
  gemini: (state, project) => `tmp/${geminiProject(state, project)}/logs`,
};

/** The longest one CLI run may take before it is killed: the runs take seconds, the timed-out hook ~10 s more. */
const RUN_LIMIT_MS = 120_000;
/** How long the `timed-out` hook stalls: well past every installed timeout (10 s, 10000 ms). */
const STALL_SECONDS = 40;

/** The stand-in for the installed command's node binary in a failing state: logs each start, then dies by a signal or stalls. */
function failingNode(hook: HookState, log: string): string | undefined {
  const record = `printf '%s\\n' "$*" >> '${log}'`;
  if (hook === "killed") return `#!/bin/sh\n${record}\nkill -KILL $$\n`;
  if (hook === "timed-out") return `#!/bin/sh\n${record}\nexec sleep ${STALL_SECONDS}\n`;
  return undefined;
}

/**
 * How a run differs from the plain one: how Codex trusts the hook, more
 * environment for the CLI (e.g. CI's), or started by `twinlock exec` as an
 * admitted executor on a file inside the admitted targets or outside them
 * (see admitted-run.ts), with `--hook-only` or `--sandbox` passed to exec.
 */
export interface RunOptions {
  trust?: CodexTrust;
  env?: Record<string, string>;
  exec?: { on: ExecOn; flags?: ("--hook-only" | "--sandbox")[] };
  /** Started by `twinlock plan RUN MD-29 --handoff handoff` as the pair's planner, on a file in its handoff folder or a target (see admitted-run.ts). */
  plan?: { on: "handoff" | "target" };
  /** The tool an outward call is made by (Claude Code's `Agent` unless said). */
  outward?: OutwardTool;
}

/**
 * The file a run under exec acts on: a new file for a write or a shell, an existing one for an edit (a write on an
 * existing file would be refused by Claude Code before any hook: it was not read first), a target or not.
 */
function execFile(admitted: AdmittedProject, kind: AnyActionKind, on: "target" | "outside"): string {
  if (on === "outside") return kind === "edit" ? admitted.files.outside : admitted.files.outsideNew;
  return kind === "edit" ? admitted.files.editTarget : admitted.files.newTarget;
}

/** The file a run under plan acts on: a new one for a write or a shell, one holding EDIT_BEFORE for an edit. */
function planFile(planner: PlannerProject, kind: AnyActionKind, on: "handoff" | "target"): string {
  if (kind === "freeze") return planner.runFile;
  if (on === "handoff") return kind === "edit" ? planner.files.handoffEdit : planner.files.handoffNew;
  return kind === "edit" ? planner.files.editTarget : planner.files.newTarget;
}

/**
 * The names of `env` that exec's and plan's allow-list would not hand the CLI, for their `--pass-env`: what the
 * CLI needs to reach the scripted model and stay quiet, passed as a person starting it would pass it.
 */
function passEnvOf(env: Record<string, string | undefined>): string[] {
  return Object.keys(env).filter((name) => !isAgentVariable(name));
}

/**
 * Runs `agent`'s real CLI once, headless, in a new temporary project against
 * a scripted model server that asks for one `kind` call on a file in the
 * project (the crafted patch: on a file beside it, outside), with the hook
 * in state `hook`. Everything it made (folders, the server, the CLI and
 * what it started) is gone when this returns or throws.
 */
export async function runAgent(agent: RealAgent, kind: AnyActionKind, hook: HookState, options: RunOptions = {}): Promise<AgentRun> {
  const trust = options.trust ?? "none";
  const cli = AGENT_CLIS[agent];
  const root = mkdtempSync(path.join(os.tmpdir(), `twinlock-real-${agent}-`));
  let server: Awaited<ReturnType<typeof startModelServer>> | undefined;
  try {
    if (options.exec && options.plan) throw new Error("a run is under exec or under plan, not both");
    const admitted = options.exec ? await admittedProject() : undefined;
    const planner = options.plan ? await plannerProject() : undefined;
    const project = admitted?.project ?? planner?.project ?? path.join(root, "project");
    const home = path.join(root, "home");
    const gateHome = admitted?.home ?? planner?.home ?? path.join(root, "gate-home");
    // In HOME: exec's sandbox hides /tmp (where root is) but mounts HOME again, read-only, so the hook's stand-in runs there too.
    const shimDir = path.join(root, "home", ".twinlock-test-bin");
    // In a runtime folder of the tool's state folder, which exec's sandbox leaves writable (the rest of it is
    // read-only), so that the stand-in can log there too.
    const hookLog = path.join(home, `.${agent}`, HOOK_LOG_FOLDER[agent](path.join(home, `.${agent}`), project), "hook-calls.log");
    for (const d of [
      project,
      home,
      gateHome,
      shimDir,
      path.dirname(hookLog),
      path.join(home, ".claude"),
      path.join(home, ".codex"),
      path.join(home, ".gemini"),
    ])
      mkdirSync(d, { recursive: true });
    const file =
      admitted && options.exec
        ? options.exec.on === "hook-config"
          ? path.join(project, cli.hookConfig)
          : execFile(admitted, kind, options.exec.on)
        : planner && options.plan
          ? planFile(planner, kind, options.plan.on)
          : path.join(kind === "crafted-patch" ? root : project, `${kind}-target.txt`);
    if (!admitted && !planner && (kind === "edit" || kind === "reads")) writeFileSync(file, EDIT_BEFORE);
    let before = existsSync(file) ? readFileSync(file, "utf8") : null;
    const action = actionOf(kind, file, options.outward);
    server = await startModelServer(cli.responder(action));
    // A freeze: twinlock's stdio MCP server for the run, registered in the CLI's own settings as `twinlock`.
    const mcp = kind === "freeze" ? { command: process.execPath, args: [DIST_BIN, "mcp", "--run", file, "--home", gateHome] } : undefined;
    const dirs: RunDirs = { project, home, modelUrl: server.url, ...(mcp ? { mcp } : {}) };
    cli.configure(dirs);
    if (hook !== "uninstalled") {
      const install = [DIST_BIN, "hooks", "install", "--agent", agent, "--project", "--home", gateHome];
      execFileSync(process.execPath, trust === "twinlock" ? [...install, "--trust"] : install, {
        cwd: project,
        env: { PATH: process.env.PATH ?? "", HOME: home, CODEX_HOME: path.join(home, ".codex") },
        stdio: "pipe",
      });
    }
    if (hook === "not-found" || hook === "killed" || hook === "timed-out") {
      // The installed command, its node binary replaced by a stand-in: missing, or one that fails as `hook` says.
      const config = path.join(project, cli.hookConfig);
      const stand = path.join(shimDir, "node");
      writeFileSync(config, readFileSync(config, "utf8").replaceAll(` ${process.execPath} `, ` ${stand} `));
      const script = failingNode(hook, hookLog);
      if (script !== undefined) writeFileSync(stand, script, { mode: 0o755 });
    }
    // The hook's config is there once installed: what the run must leave as it is.
    if (options.exec?.on === "hook-config") before = existsSync(file) ? readFileSync(file, "utf8") : null;
    appendFileSync(hookLog, "");
    const { args, env } = cli.command(dirs, "make the scripted change", trust === "bypass");
    // No twinlock anywhere on PATH: node's folder for the CLIs that are node scripts, and the system's.
    const PATH = [path.dirname(process.execPath), "/usr/bin", "/bin"].join(":");
    const started = Date.now();
    const runEnv = { PATH, HOME: home, TMPDIR: os.tmpdir(), LANG: "C.UTF-8", TERM: "dumb", ...env, ...options.env };
    // What exec's and plan's allow-list leaves out, passed on as a person would with --pass-env.
    const passEnv = passEnvOf(runEnv);
    const passing = passEnv.length > 0 ? ["--pass-env", passEnv.join(",")] : [];
    // Under exec: `twinlock exec RUN MD-30 [flags] -- CLI ARGS…`, as a person starts an admitted executor.
    // Under plan: `twinlock plan RUN MD-29 --handoff handoff -- CLI ARGS…`, as a person starts the pair's planner.
    const [program, argv] = admitted
      ? [
          process.execPath,
          [
            DIST_BIN,
            "exec",
            admitted.runFile,
            admitted.executor,
            "--home",
            admitted.home,
            ...passing,
            ...(options.exec?.flags ?? []),
            "--",
            cli.bin,
            ...args,
          ],
        ]
      : planner
        ? [
            process.execPath,
            [
              DIST_BIN,
              "plan",
              planner.runFile,
              planner.planner,
              "--handoff",
              "handoff",
              "--home",
              planner.home,
              ...passing,
              "--",
              cli.bin,
              ...args,
            ],
          ]
        : [cli.bin, args];
    const child = spawn(program, argv, {
      cwd: project,
      env: runEnv,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const limit = setTimeout(() => killGroup(child.pid), RUN_LIMIT_MS);
    const [exitCode, signal] = await new Promise<[number | null, string | null]>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (code, sig) => resolve([code, sig]));
    }).finally(() => {
      clearTimeout(limit);
      // Whatever the CLI left running (a stalled hook's sleep) goes with it.
      killGroup(child.pid);
    });
    const durationMs = Date.now() - started;
    return {
      agent,
      hook,
      trust,
      exec: options.exec?.on,
      plan: options.plan?.on,
      before,
      action,
      exitCode,
      signal,
      stdout,
      stderr,
      durationMs,
      fileAfter: existsSync(file) ? readFileSync(file, "utf8") : null,
      hookCalls: readFileSync(hookLog, "utf8").split("\n").filter(Boolean),
      requests: server.requests,
      toolResults: cli.toolResults(server.requests.map((r) => r.body)),
    };
  } finally {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** One line for the report and for a failed assertion: what the run did, briefly. */
export function describeRun(run: AgentRun): string {
  const file = run.fileAfter === null ? "no file" : `file ${JSON.stringify(run.fileAfter.slice(0, 60))}`;
  return [
    `${run.agent} ${run.action.kind} hook=${run.hook}${run.trust === "none" ? "" : ` (trust: ${run.trust})`}${run.exec ? ` under exec on ${run.exec === "target" ? "a target" : run.exec === "outside" ? "a file outside the targets" : "the hook's config"}` : ""}${run.plan ? ` under plan on ${run.plan === "handoff" ? "a file in the handoff folder" : "an action target"}` : ""}: exit ${run.exitCode ?? run.signal}, ${run.durationMs} ms, ${file}`,
    `hook started ${run.hookCalls.length}x; ${run.requests.length} model requests`,
    `tool results: ${JSON.stringify(run.toolResults.map((t) => t.slice(0, 300)))}`,
    `stderr: ${run.stderr.slice(-600)}`,
  ].join("\n  ");
}
