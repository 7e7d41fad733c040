import { presentPlan } from "../../gate/present-plan.js";
import { parsePromptId } from "../../input/parse-input.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/** `twinlock present RUN ID`: the frozen plan as Markdown for the reviewer. */
export async function runPresent(runFile: string, id: string, o: CommonOptions): Promise<CommandResult> {
  const p = await presentPlan(storeOption(o), runFile, parsePromptId(id, "planner"));
  return { exitCode: 0, text: p.markdown.trimEnd(), json: { ok: true, ...p } };
}
