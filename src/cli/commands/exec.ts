import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { UsageError } from "../../errors/errors.js";
import { bindSession, unbindSession } from "../../gate/bind-session.js";
import { recordExecResult } from "../../home/exec-results.js";
import { shellQuote } from "../../run/next-step.js";
import { chooseSandbox, confineCommand, type SandboxFlags } from "../../sandbox/exec-sandbox.js";
import { resolveRunFile } from "../../store/run-folder.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { homeOption, usesTeamStore } from "../home-option.js";
import { runForwardingSignals } from "../run-forwarding-signals.js";
import { writeOutput } from "../write-output.js";
import { runAdmit } from "./admit.js";

type ExecOptions = CommonOptions & {
  planner?: string;
  mode?: string;
  environment?: string;
  actions?: string;
  actor?: string;
  checkout?: string;
} & SandboxFlags;

/**
 * `twinlock exec RUN EXECUTOR [--checkout DIR] -- CMD…` (SPEC §11): admit
 * (every check, as `admit`; a failure is admit's exit 3 and `!STOP:` line,
 * and CMD never starts), write the read-only checkout (by default a new
 * temporary folder, removed when CMD ends), bind the session in the gate
 * home, run CMD with TWINLOCK_RUN, TWINLOCK_EXECUTOR, TWINLOCK_HANDOFF and
 * TWINLOCK_SESSION set and NODE_OPTIONS removed, pass signals on, record its
 * exit status, unbind, and exit with CMD's status.
 */
export async function runExec(runFile: string, executor: string, cmd: string[], o: ExecOptions): Promise<CommandResult> {
  if (cmd.length === 0) throw new UsageError("exec needs the command to run after `--`, e.g. `twinlock exec run.json MD-30 -- claude`");
  // The session binding and the hooks read the gate home's folder store: refused before an admission could use the consent.
  if (usesTeamStore(o))
    throw new UsageError(
      "exec binds the agent's session in the gate home's folder store, and TWINLOCK_STORE names a team store: unset it for a run file, or admit from the team store with `twinlock admit RUN EXECUTOR --store URL --checkout DIR` and run the executor on that checkout",
    );
  // The sandbox is chosen (or exec refused) before the admission could use the consent.
  const sandbox = chooseSandbox(cmd, o);
  const home = homeOption(o);
  const scratch = o.checkout === undefined ? mkdtempSync(path.join(os.tmpdir(), "twinlock-exec-")) : undefined;
  const checkout = o.checkout ?? path.join(scratch as string, "handoff");
  try {
    const admitted = await runAdmit(runFile, executor, { ...o, checkout });
    if (admitted.exitCode !== 0) return admitted;
    if (!o.json) writeOutput(2, `${admitted.text}\n`);
    const secret = randomBytes(32).toString("hex");
    const binding = await bindSession({
      runFile,
      home,
      executor,
      checkoutDir: checkout,
      projectDir: process.cwd(),
      pid: process.pid,
      secret,
      note: (text) => {
        if (!o.json) writeOutput(2, `${text}\n`);
      },
    });
    const startedAt = new Date().toISOString();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TWINLOCK_RUN: resolveRunFile(runFile),
      TWINLOCK_EXECUTOR: binding.executor,
      TWINLOCK_HANDOFF: binding.checkout_dir,
      TWINLOCK_SESSION: secret,
      TWINLOCK_HOME: home.dir,
    };
    delete env.NODE_OPTIONS;
    let run: { status: number; error?: string };
    try {
      // Codex and Gemini run confined to the targets (src/sandbox): their writes elsewhere fail even when the hook fails.
      const launch = confineCommand(sandbox, { cmd, env, cwd: process.cwd(), writable: binding.targets });
      if (!o.json) for (const note of launch.notes) writeOutput(2, `${note}\n`);
      try {
        run = await runForwardingSignals(launch.cmd, launch.env);
      } finally {
        launch.release();
      }
    } finally {
      await unbindSession(home, binding);
    }
    const record = recordExecResult(home, {
      format: "twinlock-exec-result/1",
      run_id: binding.run_id,
      planner: binding.planner,
      executor: binding.executor,
      handoff_hash: binding.handoff_hash,
      command: cmd,
      status: run.status,
      started_at: startedAt,
      ended_at: new Date().toISOString(),
    });
    const close = `twinlock close ${shellQuote(runFile)} ${binding.planner} --result ${run.status === 0 ? "verified" : "failed"}`;
    const text = [
      ...(run.error ? [`twinlock: ${run.error}; check the command and its PATH`] : []),
      `${cmd[0]} exited with status ${run.status}; recorded in ${record}; the session is unbound`,
      `next: check the work against the plan's criteria, then ${close}  (or --result rolled_back)`,
    ].join("\n");
    if (!o.json) writeOutput(2, `${text}\n`);
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
    if (scratch) removeReadOnlyTree(scratch);
  }
}

/** Remove a checkout tree whose folders were made read-only. */
function removeReadOnlyTree(dir: string): void {
  const open = (d: string) => {
    try {
      chmodSync(d, 0o700);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) open(path.join(d, e.name));
    } catch {
      // gone already, or not ours: rmSync reports what matters
    }
  };
  open(dir);
  rmSync(dir, { recursive: true, force: true });
}
