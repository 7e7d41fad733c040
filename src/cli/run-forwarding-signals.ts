import { spawn } from "node:child_process";
import { constants } from "node:os";

/** Signals `twinlock exec` passes on to its child instead of dying of them. */
export const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Run `cmd` with `env`, its stdio the terminal's, passing SIGINT, SIGTERM
 * and SIGHUP on to it, and resolve to its exit status (128 + the signal's
 * number when a signal ended it, as a shell reports it). A command that
 * cannot be started resolves to 127, with why.
 */
export function runForwardingSignals(cmd: string[], env: NodeJS.ProcessEnv): Promise<{ status: number; error?: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd[0] as string, cmd.slice(1), { stdio: "inherit", env });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const s of FORWARDED_SIGNALS) process.on(s, forward);
    const done = (r: { status: number; error?: string }) => {
      for (const s of FORWARDED_SIGNALS) process.off(s, forward);
      resolve(r);
    };
    child.on("error", (error) =>
      done({ status: 127, error: `${cmd[0]} could not be started (${(error as NodeJS.ErrnoException).code ?? error.message})` }),
    );
    child.on("exit", (code, signal) => done({ status: code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0) }));
  });
}
