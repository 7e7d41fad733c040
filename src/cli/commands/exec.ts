import { randomBytes } from "node:crypto";
import path from "node:path";
import { UsageError } from "../../errors/errors.js";
import { bindSession } from "../../gate/bind-session.js";
import { signingHint } from "../../gate/pair-status.js";
import { targetsToAdmit } from "../../gate/resolve-session-targets.js";
import { recordExecResult } from "../../home/exec-results.js";
import { bindingFileOf } from "../../home/write-session-binding.js";
import { parseActionIds } from "../../input/parse-input.js";
import { shellQuote } from "../../run/next-step.js";
import { chooseSandbox, confineCommand, requireMountableTargets, type SandboxFlags } from "../../sandbox/exec-sandbox.js";
import { sandboxRecordFile } from "../../sandbox/sandbox-record.js";
import { makeSessionTempDir, removeReadOnlyTree } from "../../sandbox/session-temp-folder.js";
import { resolveRunFile } from "../../store/run-folder.js";
import type { RunStore } from "../../store/run-store.js";
import { writeOutput } from "../../write-output.js";
import { agentEnvironment } from "../agent-environment.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { homeOption, storeOption, storeUrl, usesTeamStore } from "../home-option.js";
import { parsePassEnv, runBoundSession } from "../run-bound-session.js";
import { runsScriptRuntime, scriptDrivesClaudeCode } from "../runs-script-runtime.js";
import { startSessionMcpRelay } from "../session-mcp-relay.js";
import { runAdmit } from "./admit.js";
import { hookInstalledAnywhere, NO_HOOK_NOTE } from "./hooks-status.js";

type ExecOptions = CommonOptions & {
  planner?: string;
  mode?: string;
  environment?: string;
  actions?: string;
  actor?: string;
  checkout?: string;
  passEnv?: string;
} & SandboxFlags;

/**
 * `twinlock exec RUN EXECUTOR [--checkout DIR] -- CMD…` (SPEC §11, §12):
 * choose the sandbox and check the targets it would mount (a refusal there
 * comes before the admission, which stays unrecorded and its consent
 * unused), admit (every check, as `admit`; a failure is admit's exit 3 and `!STOP:`
 * line, and CMD never starts), write the read-only checkout (by default a
 * new temporary folder, removed when CMD ends), bind the session in the gate
 * home (on either store: the binding lives in the home the hook reads), run
 * CMD with the allow-listed environment (AGENT_ENVIRONMENT) and the
 * session's TWINLOCK_RUN, TWINLOCK_EXECUTOR, TWINLOCK_HANDOFF,
 * TWINLOCK_SESSION and TWINLOCK_HOME, keep the binding live while the run
 * is unchanged (and end it on any change), pass signals on, record its exit
 * status, unbind, and exit with CMD's status.
 */
export async function runExec(runFile: string, executor: string, cmd: string[], o: ExecOptions): Promise<CommandResult> {
  if (cmd.length === 0) throw new UsageError("exec needs the command to run after `--`, e.g. `twinlock exec run.json MD-30 -- claude`");
  const extra = parsePassEnv(o.passEnv);
  // A script on the Claude Agent SDK cannot run under --sandbox: refused before the admission could use the consent.
  if (o.sandbox && scriptDrivesClaudeCode(cmd, process.cwd()))
    throw new UsageError(
      "the script uses the Claude Agent SDK, whose Claude Code waits under --sandbox for its model until killed: run it with --hook-only instead (the adapter's hooks judge every tool call); the consent is not used",
    );
  // The sandbox is chosen (or exec refused) before the admission could use the consent.
  const sandbox = chooseSandbox(cmd, o, undefined, { env: process.env, cwd: process.cwd(), binder: "exec" });
  const home = homeOption(o, { create: usesTeamStore(o) });
  const scratch = o.checkout === undefined ? makeSessionTempDir("exec") : undefined;
  const checkout = o.checkout ?? path.join(scratch as string, "handoff");
  let store: RunStore | undefined;
  try {
    store = storeOption(o);
    // The targets the sandbox could not mount are refused before the admission could use the consent, not after it.
    if (sandbox.kind === "bubblewrap")
      requireMountableTargets(
        sandbox,
        await targetsToAdmit({
          store,
          runFile,
          executor,
          planner: o.planner,
          actions: o.actions === undefined || o.actions.trim() === "all" ? undefined : parseActionIds(o.actions, "--actions"),
          projectDir: process.cwd(),
        }),
      );
    const admitted = await runAdmit(runFile, executor, { ...o, checkout });
    if (admitted.exitCode !== 0) return admitted;
    const note = (text: string) => {
      if (!o.json) writeOutput(2, `${text}\n`);
    };
    note(admitted.text);
    const secret = randomBytes(32).toString("hex");
    const binding = await bindSession({
      runFile,
      home,
      store,
      executor,
      checkoutDir: checkout,
      projectDir: process.cwd(),
      pid: process.pid,
      secret,
      note,
    });
    const startedAt = new Date().toISOString();
    // What the command runs with: the allow-listed environment and the session's own variables, nothing else.
    const env = agentEnvironment(
      process.env,
      {
        TWINLOCK_RUN: binding.store === "folder" ? resolveRunFile(runFile) : binding.run_file,
        TWINLOCK_EXECUTOR: binding.executor,
        TWINLOCK_HANDOFF: binding.checkout_dir as string,
        TWINLOCK_SESSION: secret,
        TWINLOCK_HOME: home.dir,
      },
      { extra, writable: binding.targets },
    );
    // Codex and Gemini run confined to the targets (src/sandbox): their writes elsewhere fail even when the hook fails.
    // An SDK agent (a node script) asks through its adapter: the note about agent CLIs' hooks would be noise there.
    if (!runsScriptRuntime(cmd) && !hookInstalledAnywhere()) note(NO_HOOK_NOTE);
    // The agent's `twinlock mcp` talks to this session's, outside (the sandbox keeps the gate home read-only), scoped to its own pair.
    const relay = await startSessionMcpRelay({
      runRef: runFile,
      home: home.dir,
      role: { planner: binding.planner, executor: binding.executor },
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
        writable: binding.targets,
        binder: "exec",
        mcpSocket: sandbox.kind === "bubblewrap" ? relay.socket : undefined,
        // Inside the sandbox's PID namespace the hook cannot see this process: it finds the session by that namespace.
        record: { file: sandboxRecordFile(bindingFileOf(home, binding)), secret_sha256: binding.secret_sha256, process: binding.process },
      });
      for (const line of launch.notes) note(line);
      try {
        run = await runBoundSession({ cmd: launch.cmd, env: launch.env, store, ref: runFile, home, binding, note, reap: launch.reap });
      } finally {
        // What the command added beside a file target (the one power its folder's mount gives), for the person to see.
        for (const line of launch.release()) note(line);
      }
    } finally {
      await relay.close();
    }
    const record = recordExecResult(home, {
      format: "twinlock-exec-result/1",
      run_id: binding.run_id,
      planner: binding.planner,
      executor: binding.executor,
      handoff_hash: binding.handoff_hash as string,
      command: cmd,
      status: run.status,
      started_at: startedAt,
      ended_at: new Date().toISOString(),
    });
    // A verified close is a person's signed call on a signing suite: the hint names the key it needs.
    const signs = run.status === 0 && signingHint(home, (await store.read(runFile)).state.suite);
    const close = `twinlock close ${shellQuote(runFile)} ${binding.planner} --result ${run.status === 0 ? `verified --git-range BASE...HEAD${signs ? " --key FILE" : ""}` : "failed"}`;
    const text = [
      ...(run.error ? [`twinlock: ${run.error}; check the command and its PATH`] : []),
      `${cmd[0]} exited with status ${run.status}; recorded in ${record}; the session is unbound`,
      `next: check the work against the plan's criteria, then ${close}  (or --result rolled_back${run.status === 0 ? "; outside git, --changed-files FILE instead of --git-range" : ""})`,
    ].join("\n");
    note(text);
    return {
      exitCode: run.status,
      text: "",
      json: {
        ok: run.status === 0,
        status: run.status,
        planner: binding.planner,
        executor: binding.executor,
        checkout: binding.checkout_dir,
        record,
      },
    };
  } finally {
    await store?.close();
    if (scratch) removeReadOnlyTree(scratch);
  }
}
