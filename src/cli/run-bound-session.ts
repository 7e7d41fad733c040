import { UsageError } from "../errors/errors.js";
import { unbindSession } from "../gate/bind-session.js";
import { keepSessionLive } from "../gate/keep-session-live.js";
import type { GateHome } from "../home/gate-home.js";
import type { SessionBinding } from "../home/session-binding.js";
import type { RunStore } from "../store/run-store.js";
import { NEVER_PASSED } from "./agent-environment.js";
import { runForwardingSignals } from "./run-forwarding-signals.js";

/**
 * Run the agent's command in a bound session: the keeper renews the
 * binding's lease and ends it on any change of the run that ends the
 * session (told on stderr through `note`); when the command ends, however
 * it ends, what it left in the sandbox is killed (`reap`), then the keeper
 * stops and the binding is removed. Resolves to the
 * command's status (127 when it could not start, with why).
 */
export async function runBoundSession(input: {
  cmd: string[];
  env: NodeJS.ProcessEnv;
  store: RunStore;
  ref: string;
  home: GateHome;
  binding: SessionBinding;
  note: (text: string) => void;
  /** Run once the command ended, before the keeper stops and the binding is removed: exec's sandbox kills what is left in it. */
  reap?: () => string | undefined;
}): Promise<{ status: number; error?: string }> {
  const who = input.binding.kind === "planner" ? `planner ${input.binding.planner}` : input.binding.executor;
  const keeper = keepSessionLive({
    store: input.store,
    ref: input.ref,
    home: input.home,
    binding: input.binding,
    onEnd: (reason) => input.note(`twinlock: the session of ${who} ended: ${reason}; every hooked write, shell and MCP call is now denied`),
    onProblem: (reason) => input.note(`twinlock: ${reason}`),
  });
  try {
    return await runForwardingSignals(input.cmd, input.env);
  } finally {
    try {
      const left = input.reap?.();
      if (left) input.note(left);
    } finally {
      await keeper.stop();
      await unbindSession(input.home, input.binding);
    }
  }
}

/** The names `--pass-env A,B` gives: variable names, none of those never handed to an agent. */
export function parsePassEnv(text: string | undefined): string[] {
  if (text === undefined) return [];
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name))
      throw new UsageError(`--pass-env ${JSON.stringify(name.slice(0, 40))} is not a variable name; give names like AWS_PROFILE,MY_TOKEN`);
    if ((NEVER_PASSED as readonly string[]).includes(name) || name.startsWith("TWINLOCK_"))
      throw new UsageError(
        `--pass-env ${name}: ${name.startsWith("TWINLOCK_") ? "the session's TWINLOCK_ variables are set by twinlock itself" : `${name} is never handed to an agent`}; leave it out`,
      );
  }
  return names;
}
