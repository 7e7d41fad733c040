import { demoHandoffRecords } from "../demo/demo-handoff.js";
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

/** The demo handoff's records read as one model (twinlockModelOf). */
export function demoModel(): HandoffModel {
  return twinlockModelOf(demoHandoffRecords());
}

/** `count` evidence records X0, X1, … of evidence_index.json, each with a summary of its own: more than any page shows. */
export function manyEvidence(count: number): HandoffModel["evidence"] {
  return Array.from({ length: count }, (_, i) => ({
    id: `X${i}`,
    file: "evidence_index.json",
    summary: `seen ${i}`,
    source: { id: `X${i}` },
  }));
}
