import { randomBytes } from "node:crypto";
import { UsageError } from "../../errors/errors.js";
import { bindPlannerSession } from "../../gate/bind-session.js";
import { bindingFileOf } from "../../home/write-session-binding.js";
import { parsePromptId } from "../../input/parse-input.js";
import { chooseSandbox, confineCommand, type SandboxFlags } from "../../sandbox/exec-sandbox.js";
import { sandboxRecordFile } from "../../sandbox/sandbox-record.js";
import { resolveRunFile } from "../../store/run-folder.js";
import type { RunStore } from "../../store/run-store.js";
import { writeOutput } from "../../write-output.js";
import { agentEnvironment } from "../agent-environment.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { homeOption, storeOption, storeUrl, usesTeamStore } from "../home-option.js";
import { parsePassEnv, runBoundSession } from "../run-bound-session.js";
import { runsScriptRuntime } from "../runs-script-runtime.js";
import { startSessionMcpRelay } from "../session-mcp-relay.js";
import { hookInstalledAnywhere, NO_HOOK_NOTE } from "./hooks-status.js";

type PlanOptions = CommonOptions & { handoff?: string; passEnv?: string } & SandboxFlags;

/**
 * `twinlock plan RUN PLANNER [--handoff DIR] -- CMD…` (SPEC §12): bind a
 * planner's session in the gate home (on either store), run CMD with the
 * allow-listed environment and TWINLOCK_RUN, TWINLOCK_PLANNER,
 * TWINLOCK_HANDOFF (its handoff folder), TWINLOCK_SESSION and TWINLOCK_HOME,
 * keep the binding live until a stop is raised or the pair is closed, pass
 * signals on, unbind when CMD ends and exit with CMD's status. Under it the
 * hook lets the planner read, run read-only commands, write inside its
 * handoff folder and call twinlock's own MCP tools (it freezes through
 * `twinlock_submit_handoff`); nothing else.
 */
export async function runPlan(runRef: string, planner: string, cmd: string[], o: PlanOptions): Promise<CommandResult> {
  if (cmd.length === 0)
    throw new UsageError("plan needs the command to run after `--`, e.g. `twinlock plan run.json MD-29 --handoff handoff -- claude`");
  const id = parsePromptId(planner, "planner");
  const extra = parsePassEnv(o.passEnv);
  // As for exec: Codex and Gemini run in the sandbox (here writable only in the handoff folder), chosen before anything is bound.
  const sandbox = chooseSandbox(cmd, o, undefined, { env: process.env, cwd: process.cwd(), binder: "plan" });
  const home = homeOption(o, { create: usesTeamStore(o) });
  const note = (text: string) => {
    if (!o.json) writeOutput(2, `${text}\n`);
  };
  let store: RunStore | undefined;
  try {
    store = storeOption(o);
    const secret = randomBytes(32).toString("hex");
    const binding = await bindPlannerSession({
      runFile: runRef,
      home,
      store,
      planner: id,
      handoffDir: o.handoff,
      projectDir: process.cwd(),
      pid: process.pid,
      secret,
    });
    const handoff = binding.handoff_dir as string;
    note(
      `twinlock: ${id}'s planner session is bound: it may read, run read-only commands, write inside ${handoff} and call twinlock's MCP tools (freeze with twinlock_submit_handoff)`,
    );
    // What the command runs with: the allow-listed environment and the session's own variables, nothing else.
    const env = agentEnvironment(
      process.env,
      {
        TWINLOCK_RUN: binding.store === "folder" ? resolveRunFile(runRef) : binding.run_file,
        TWINLOCK_PLANNER: id,
        TWINLOCK_HANDOFF: handoff,
        TWINLOCK_SESSION: secret,
        TWINLOCK_HOME: home.dir,
      },
      { extra, writable: [handoff] },
    );
    // An SDK agent (a node script) asks through its adapter: the note about agent CLIs' hooks would be noise there.
    if (!runsScriptRuntime(cmd) && !hookInstalledAnywhere()) note(NO_HOOK_NOTE);
    // The planner's `twinlock mcp` (its freeze, its wait) talks to this session's, outside: on a team store the agent holds no URL.
    const relay = await startSessionMcpRelay({
      runRef,
      home: home.dir,
      role: { planner: id, handoff },
      agentEnv: env,
      storeUrl: storeUrl(o),
      sandboxed: sandbox.kind === "bubblewrap",
    });
    let run: { status: number; error?: string };
    try {
      const launch = confineCommand(sandbox, {
        cmd,
        env,
        cwd: process.cwd(),
        writable: [handoff],
        binder: "plan",
        mcpSocket: sandbox.kind === "bubblewrap" ? relay.socket : undefined,
        // Inside the sandbox's PID namespace the hook cannot see this process: it finds the session by that namespace.
        record: { file: sandboxRecordFile(bindingFileOf(home, binding)), secret_sha256: binding.secret_sha256, process: binding.process },
      });
      for (const line of launch.notes) note(line);
      try {
        run = await runBoundSession({ cmd: launch.cmd, env: launch.env, store, ref: runRef, home, binding, note, reap: launch.reap });
      } finally {
        launch.release();
      }
    } finally {
      await relay.close();
    }
    note(
      [
        ...(run.error ? [`twinlock: ${run.error}; check the command and its PATH`] : []),
        `${cmd[0]} exited with status ${run.status}; the planner's session is unbound`,
      ].join("\n"),
    );
    return {
      exitCode: run.status,
      text: "",
      json: { ok: run.status === 0, status: run.status, planner: id, executor: binding.executor, handoff },
    };
  } finally {
    await store?.close();
  }
}
