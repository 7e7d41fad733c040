import { presentPlan } from "../../gate/present-plan.js";
import { parsePromptId } from "../../input/parse-input.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { homeOption } from "../home-option.js";

/** `twinlock present RUN ID`: the frozen plan as Markdown for the reviewer. */
export function runPresent(runFile: string, id: string, o: CommonOptions): CommandResult {
  const p = presentPlan(runFile, parsePromptId(id, "planner"), homeOption(o));
  return { exitCode: 0, text: p.markdown.trimEnd(), json: { ok: true, ...p } };
}
