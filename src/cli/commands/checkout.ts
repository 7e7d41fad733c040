import { checkoutApproved } from "../../gate/checkout-approved.js";
import { parsePromptId } from "../../input/parse-input.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/** `twinlock checkout RUN EXECUTOR DIR`: the read-only copy of exactly the approved bytes. */
export async function runCheckout(runFile: string, executor: string, dir: string, o: CommonOptions): Promise<CommandResult> {
  const r = await checkoutApproved({ run: runFile, store: storeOption(o), executor: parsePromptId(executor, "executor"), dir });
  const h = r.workflow.handoff;
  return {
    exitCode: 0,
    text: `checked out ${h?.files.length} files of ${r.workflow.planner} revision ${h?.revision} (${h?.hash}) to ${r.dir}, read-only; work from there, not from the live handoff folder`,
    json: { ok: true, dir: r.dir, handoff_hash: h?.hash, revision: h?.revision, files: h?.files },
  };
}
