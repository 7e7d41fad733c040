import "../../schemas/zod-setup.js";
import type { z } from "zod/mini";
import { safeParseFewIssues } from "../../schemas/first-issue.js";
import type { HandoffFormat } from "../handoff-format.js";
import { emptyModel, type HandoffModel, type ReadinessProblem } from "../handoff-model.js";
import {
  type AcceptanceCriteria,
  type ActionPlan,
  type EvidenceIndex,
  type FindingRegister,
  RECORD_FILES,
  type RecordFile,
} from "../handoff-records.js";
import type { HandoffSource } from "../handoff-source.js";
import { readJsonRecord } from "./read-json-record.js";

/** The twinlock format (the default): the four record files of `handoff-records.ts`, checked by their zod schemas. */
export const TWINLOCK_FORMAT: HandoffFormat = {
  name: "twinlock",
  recordFiles: Object.keys(RECORD_FILES),
  markdownDeclares: false,
  read: readTwinlockHandoff,
};

function readTwinlockHandoff(source: HandoffSource): { model: HandoffModel; problems: ReadinessProblem[] } {
  const problems: ReadinessProblem[] = [];
  const parsed: Partial<Record<RecordFile, unknown>> = {};
  for (const [name, schema] of Object.entries(RECORD_FILES) as Array<[RecordFile, z.ZodMiniType]>) {
    const json = readJsonRecord(source, name, problems);
    if (!json) continue;
    // The first few issues only: zod's whole list of a file of 50,000 bad actions overflowed the stack while being merged.
    const result = safeParseFewIssues(schema, json.data, 20);
    if (!result.success) {
      for (const issue of result.error.issues) {
        problems.push({
          file: name,
          record: recordAt(json.data, issue.path),
          message: `${issue.path.join(".") || "(top level)"}: ${issue.message}`,
        });
      }
      continue;
    }
    parsed[name] = result.data;
  }
  const model = emptyModel("twinlock");
  model.recordFiles = Object.keys(RECORD_FILES).filter((f) => source.files.includes(f));
  const evidence = parsed["evidence_index.json"] as EvidenceIndex | undefined;
  const findings = parsed["finding_register.json"] as FindingRegister | undefined;
  const actions = parsed["action_plan.json"] as ActionPlan | undefined;
  const criteria = parsed["acceptance_criteria.json"] as AcceptanceCriteria | undefined;
  if (evidence) {
    model.loaded.evidence = true;
    model.evidence = evidence.evidence.map((e) => ({
      id: e.id,
      file: "evidence_index.json",
      source: e,
      summary: `${e.source}: ${e.observed}`,
    }));
  }
  if (findings) {
    model.loaded.findings = true;
    model.loaded.unknowns = true;
    model.findings = findings.findings.map((f) => ({
      id: f.id,
      file: "finding_register.json",
      source: f,
      summary: f.summary,
      evidence: f.evidence,
      facts: f.confidence ? [["confidence", f.confidence]] : [],
    }));
    model.unknowns = findings.unknowns.map((u) => ({
      id: u.id,
      file: "finding_register.json",
      source: u,
      question: u.question,
      status: u.status,
      ...(u.owner ? { owner: u.owner } : {}),
    }));
  }
  if (actions) {
    model.loaded.actions = true;
    model.loaded.stops = true;
    model.actions = actions.actions.map((a) => ({
      id: a.id,
      file: "action_plan.json",
      source: a,
      summary: a.summary,
      target: a.target,
      risk: a.risk,
      rollback: a.rollback,
      findings: a.findings,
      dependsOn: a.depends_on,
      verifies: a.verifies,
    }));
    model.stops = actions.stops.map((s) => ({
      reason: s.reason,
      resolved: s.resolved,
      file: "action_plan.json",
      ...(s.notes ? { notes: s.notes } : {}),
    }));
  }
  if (criteria) {
    model.loaded.criteria = true;
    model.criteria = criteria.criteria.map((c) => ({
      id: c.id,
      file: "acceptance_criteria.json",
      source: c,
      statement: c.criterion,
      method: c.method,
    }));
  }
  return { model, problems };
}

/** The ID of the innermost record on an issue's path. */
function recordAt(data: unknown, issuePath: PropertyKey[]): string | undefined {
  let node: unknown = data;
  let id: string | undefined;
  for (const key of issuePath) {
    if (node === null || typeof node !== "object") break;
    node = (node as Record<PropertyKey, unknown>)[key];
    if (node && typeof node === "object" && typeof (node as { id?: unknown }).id === "string") id = (node as { id: string }).id;
  }
  return id;
}
