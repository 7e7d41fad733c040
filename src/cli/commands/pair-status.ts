import { existsSync } from "node:fs";
import { UsageError } from "../../errors/errors.js";
import { type PairStatus, pairStatusFromFlags, REVIEW_STATUSES, type ReviewStatus } from "../../gate/pair-status-from-flags.js";
import { parseChoice, parsePromptId } from "../../input/parse-input.js";
import { PROMPT_ID_PATTERN } from "../../suite/prompt.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { loadSuiteOption } from "../load-suite-option.js";
import { stateInWords } from "../state-in-words.js";

/** `twinlock pair-status ID` (stateless) or `twinlock pair-status RUN ID` (from a run). */
export async function runPairStatus(
  first: string,
  second: string | undefined,
  o: CommonOptions & { suite?: string; handoffReady?: boolean; reviewStatus?: string },
): Promise<CommandResult> {
  let status: PairStatus;
  if (second === undefined) {
    if (!PROMPT_ID_PATTERN.test(first) && existsSync(first))
      throw new UsageError(`give the prompt ID after the run file: twinlock pair-status ${first} MD-29`);
    if (o.reviewStatus !== undefined) parseChoice(o.reviewStatus, REVIEW_STATUSES, "--review-status");
    const id = parsePromptId(first);
    status = pairStatusFromFlags(loadSuiteOption(o.suite, { promptIds: [id] }), id, {
      handoffReady: o.handoffReady,
      reviewStatus: o.reviewStatus as ReviewStatus | undefined,
    });
  } else {
    if (o.handoffReady || o.reviewStatus)
      throw new UsageError("--handoff-ready and --review-status are for the stateless form; a run file knows its own state");
    // Only the form with a run file needs the run store, its schemas and the gate home: loaded when asked for.
    const [{ pairStatusFromRun }, { storeOption }] = await Promise.all([import("../../gate/pair-status.js"), import("../home-option.js")]);
    status = await pairStatusFromRun(storeOption(o), first, parsePromptId(second));
  }
  const s = status;
  const lines = [
    `pair        ${s.planner} → ${s.executor} (${s.executor_title}); exact twin only`,
    `state       ${s.state}${stateInWords(s.state)}${s.source === "run" ? `, revision ${s.revision}` : " (from the flags given)"}`,
    ...(s.handoff_hash ? [`handoff     ${s.handoff_hash}`] : []),
    ...(s.source === "run" ? [`authorized  ${s.authorized_execution_prompt_ids.join(", ") || "none"}`] : []),
    ...(s.handoff_changed ? [`changed     ${s.handoff_changed.join(", ")} (since the freeze)`] : []),
    ...(s.unresolved_stops.length ? [`stops       ${s.unresolved_stops.join(", ")}`] : []),
    `next        ${s.next_action}`,
    ...(s.next_command ? [`            ${s.next_command}`] : []),
    ...(s.question ? ["", s.question] : []),
  ];
  return { exitCode: 0, text: lines.join("\n"), json: { ok: true, ...s } };
}
