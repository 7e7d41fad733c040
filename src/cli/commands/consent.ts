import { UsageError } from "../../errors/errors.js";
import { consentPairExecution } from "../../gate/consent-pair-execution.js";
import { pairStatusFromRun } from "../../gate/pair-status.js";
import { parseDuration, parseHashOption, parseName, parsePromptId } from "../../input/parse-input.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";
import { stateInWords } from "../state-in-words.js";

/** `twinlock consent-pair-execution RUN ID --approve|--decline`: the consent receipt. */
export async function runConsent(
  runFile: string,
  id: string,
  o: CommonOptions & { approve?: boolean; decline?: boolean; handoffHash?: string; user?: string; key?: string; expiresIn?: string },
): Promise<CommandResult> {
  if (o.approve === o.decline) throw new UsageError("give exactly one of --approve or --decline");
  const store = storeOption(o);
  const r = await consentPairExecution({
    run: runFile,
    store,
    planner: parsePromptId(id, "planner"),
    approve: o.approve === true,
    handoffHash: o.handoffHash === undefined ? undefined : parseHashOption(o.handoffHash),
    user: o.user === undefined ? undefined : parseName(o.user, "--user"),
    key: keyOption(o.key),
    expiresInMs: o.expiresIn === undefined ? undefined : parseDuration(o.expiresIn, "--expires-in"),
  });
  const c = r.receipt;
  const w = r.workflow;
  const text = [
    `recorded consent ${c.decision} by ${c.user}${c.signature ? " (signed)" : ""} for ${c.executor} (${c.executor_title}) on ${c.handoff_hash} revision ${c.revision}`,
    ...(c.decision === "approved"
      ? [
          `  mode ${c.mode}, environment ${c.environment}, actions ${c.actions === "all" ? "all" : c.actions.join(",")}, budget ${c.budget ?? "unlimited"}, expires ${c.expires_at ?? "never"}`,
        ]
      : []),
    ...(c.decision === "approved" ? [`  authorized_execution_prompt_ids: ${r.run.state.authorized_execution_prompt_ids.join(", ")}`] : []),
    `state: ${w.state}${stateInWords(w.state)}`,
    // The one legal next step as pair-status gives it (a dry run first when the executor requires one, --key where a receipt is signed).
    ...(w.state === "dry_run_ready" || w.state === "approval_pending"
      ? [`next: ${(await pairStatusFromRun(store, runFile, w.planner, new Date(), r.run)).next_command}`]
      : []),
  ].join("\n");
  return {
    exitCode: 0,
    text,
    json: { ok: true, state: w.state, receipt: c, authorized_execution_prompt_ids: r.run.state.authorized_execution_prompt_ids },
  };
}
