import { freezePairHandoff } from "../../gate/freeze-pair-handoff.js";
import { resolveActor } from "../../gate/resolve-actor.js";
import { parseHashOption, parsePromptId, parseText } from "../../input/parse-input.js";
import { repositoryRootOf } from "../../store/repository-root.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";
import { plural } from "../plural.js";
import { stateInWords } from "../state-in-words.js";

/** `twinlock freeze-pair-handoff RUN ID`: readiness, hash, new revision, on to review. */
export async function runFreeze(
  runFile: string,
  id: string,
  o: CommonOptions & { handoff?: string; handoffHash?: string; unchangedBecause?: string; actor?: string; key?: string },
): Promise<CommandResult> {
  const r = await freezePairHandoff({
    run: runFile,
    store: storeOption(o),
    planner: parsePromptId(id, "planner"),
    handoffDir: o.handoff,
    handoffHash: o.handoffHash === undefined ? undefined : parseHashOption(o.handoffHash),
    unchangedBecause: o.unchangedBecause === undefined ? undefined : parseText(o.unchangedBecause, "--unchanged-because"),
    actor: o.actor === undefined ? undefined : resolveActor(o.actor),
    key: keyOption(o.key),
    // A team's checkouts lie at different paths: a handoff inside this one is recorded from its top (repo:REL).
    checkout: repositoryRootOf(process.cwd()),
  });
  const w = r.workflow;
  const text = [
    `froze ${w.planner} revision ${r.revision}: ${r.hash}${w.handoff?.receipt.signature ? ` (signed by ${w.handoff.frozen_by})` : ""}`,
    `  the frozen bytes are kept in the gate home; the reviewer is shown them, and the executor gets them`,
    `  ${w.handoff?.files.length} files; ${plural(r.readiness.counts.findings, "finding")}, ${plural(r.readiness.counts.actions, "action")}, ${plural(r.readiness.counts.criteria, "criterion", "criteria")}; ${plural(r.readiness.openUnknowns.length, "open unknown")}`,
    ...(r.voided ? ["  earlier review and consent of this workflow no longer apply; its executor is not authorized"] : []),
    `state: ${w.state}${stateInWords(w.state)}`,
    `next: twinlock present ${runFile} ${w.planner}`,
  ].join("\n");
  return {
    exitCode: 0,
    text,
    json: {
      ok: true,
      planner: w.planner,
      revision: r.revision,
      handoff_hash: r.hash,
      state: w.state,
      voided: r.voided,
      open_unknowns: r.readiness.openUnknowns,
    },
  };
}
