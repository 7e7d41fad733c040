import type { GateHome } from "../home/gate-home.js";
import { RENEW_MS, type SessionBinding } from "../home/session-binding.js";
import { removeSessionBinding, renewSessionBinding } from "../home/write-session-binding.js";
import type { RunStore } from "../store/run-store.js";
import { sessionEnded } from "./bind-session.js";

/** A running keeper: `stop` ends its re-checks (it never removes the binding; the caller unbinds). */
export interface SessionKeeper {
  stop(): Promise<void>;
}

/**
 * Keep a bound session live while its process runs: every `every` ms
 * (RENEW_MS) read the run from its store; while the session holds
 * (`sessionEnded`), renew the binding's lease; on any change that ends it,
 * remove the binding and tell `onEnd` why. The hook reads neither the
 * database nor the run's events, so on a team store this is how it learns
 * that a stop was raised or a consent withdrawn; on every store it is what
 * makes a binding left by a killed process run out (LEASE_MS). A run that
 * cannot be read is not renewed (the lease runs out unless a later read
 * succeeds) and `onProblem` is told once.
 */
export function keepSessionLive(input: {
  store: RunStore;
  ref: string;
  home: GateHome;
  binding: SessionBinding;
  onEnd: (reason: string) => void;
  onProblem?: (reason: string) => void;
  every?: number;
}): SessionKeeper {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let told = false;
  const tick = async () => {
    try {
      const run = await input.store.read(input.ref);
      if (stopped) return;
      const reason = sessionEnded(input.binding, run);
      if (reason !== undefined) {
        await removeSessionBinding(input.home, input.binding);
        stopped = true;
        input.onEnd(reason);
        return;
      }
      if (!(await renewSessionBinding(input.home, input.binding))) {
        stopped = true;
        input.onEnd("its binding was removed from the gate home (a stop ends the sessions of its run)");
        return;
      }
      told = false;
    } catch (error) {
      if (!told) input.onProblem?.(`the run cannot be re-checked (${(error as Error).message}); the session's lease is not renewed`);
      told = true;
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick().finally(schedule);
    }, input.every ?? RENEW_MS);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
