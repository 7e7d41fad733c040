import path from "node:path";
import { bindSession } from "../gate/bind-session.js";
import { checkoutFrozenBytes } from "../home/frozen-bytes.js";
import type { SessionBinding } from "../home/session-binding.js";
import { EXECUTOR, type GateRun, homeOf, workflowOf } from "./run-fixture.js";

/**
 * Bind the admitted executor's session of `g` as `twinlock exec` does: the
 * read-only checkout of the approved bytes in `g`'s folder, and this test
 * process standing for the agent below exec (its parent is the exec). Gives
 * the binding and the variables the agent's hook calls carry.
 */
export async function bindTestSession(
  g: GateRun,
  o: { secret?: string; note?: (text: string) => void } = {},
): Promise<{ binding: SessionBinding; env: NodeJS.ProcessEnv }> {
  const checkout = path.join(g.dir, "checkout");
  checkoutFrozenBytes(homeOf(g), workflowOf(g).handoff?.files ?? [], checkout);
  const secret = o.secret ?? "5".repeat(64);
  const binding = await bindSession({
    runFile: g.runFile,
    home: homeOf(g),
    executor: EXECUTOR,
    checkoutDir: checkout,
    projectDir: g.dir,
    pid: process.ppid,
    secret,
    note: o.note,
  });
  return { binding, env: { TWINLOCK_RUN: g.runFile, TWINLOCK_EXECUTOR: EXECUTOR, TWINLOCK_SESSION: secret } };
}
