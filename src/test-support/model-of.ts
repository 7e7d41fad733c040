import { TWINLOCK_FORMAT } from "../handoff/formats/twinlock-format.js";
import type { HandoffModel } from "../handoff/handoff-model.js";
import type { HandoffRecords } from "../handoff/handoff-records.js";
import { sourceOfTexts } from "../handoff/handoff-source.js";

/** The one model of twinlock-format records, read through the twinlock adapter as a folder of them would be. */
export function twinlockModelOf(records: HandoffRecords): HandoffModel {
  const texts = new Map<string, string>([
    ["evidence_index.json", JSON.stringify(records.evidence)],
    ["finding_register.json", JSON.stringify(records.findings)],
    ["action_plan.json", JSON.stringify(records.actions)],
    ["acceptance_criteria.json", JSON.stringify(records.criteria)],
  ]);
  const { model, problems } = TWINLOCK_FORMAT.read(sourceOfTexts(texts));
  if (problems.length > 0) throw new Error(`records do not read: ${JSON.stringify(problems)}`);
  return model;
}
