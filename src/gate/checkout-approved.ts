import { RefusalError } from "../errors/errors.js";
import { checkoutFrozenBytes } from "../home/frozen-bytes.js";
import type { Workflow } from "../run/run-schema.js";
import type { RunStore } from "../store/run-store.js";

/**
 * Write a read-only copy of exactly the approved bytes of an admitted
 * executor's handoff (SPEC §9 `checkout`), from the gate home's frozen bytes,
 * never from the live handoff folder.
 */
export async function checkoutApproved(input: { store: RunStore; run: string; executor: string; dir: string }): Promise<{
  dir: string;
  workflow: Workflow;
}> {
  const run = await input.store.read(input.run);
  const wf = Object.values(run.state.workflows).find((w) => w.executor === input.executor);
  if (!wf)
    throw new RefusalError(
      `${input.executor} is the executor of no pair in this run (pairs: ${Object.values(run.state.workflows)
        .map((w) => `${w.planner}→${w.executor}`)
        .join(", ")})`,
      {},
      { code: "UNKNOWN_PAIR" },
    );
  const admission = wf.admissions[wf.admissions.length - 1];
  if (wf.state !== "executing" || !wf.handoff || !admission || admission.handoff_hash !== wf.handoff.hash)
    throw new RefusalError(
      `${input.executor} is not admitted (state ${wf.state}); only an admitted executor gets the approved bytes — run admit first`,
    );
  return { dir: checkoutFrozenBytes(input.store.home, wf.handoff.files, input.dir), workflow: wf };
}
