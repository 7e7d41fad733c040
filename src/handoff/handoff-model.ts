import type { HandoffFormatName } from "../suite/suite-config.js";

/**
 * The one internal model of a handoff, whatever record format the planners
 * wrote: readiness, `present`, the record diff and admission's action scope
 * read only this. An adapter per format (`formats/`) builds it from the
 * files. Citations are kept as written (a bare ID or its marker, e.g. `E1`
 * or `@EVIDENCE:E1`); readiness resolves them.
 */
export interface HandoffModel {
  format: HandoffFormatName;
  evidence: EvidenceRecord[];
  findings: FindingRecord[];
  unknowns: UnknownRecord[];
  actions: ActionRecord[];
  criteria: CriterionRecord[];
  stops: StopRecord[];
  /** The files the records were read from (other files are shown as files). */
  recordFiles: string[];
  /** Which kinds were read in full: a citation into a kind that was not is not reported as dangling. */
  loaded: Record<RecordKind, boolean>;
}

/** The record kinds of the model. */
export type RecordKind = "evidence" | "findings" | "unknowns" | "actions" | "criteria" | "stops";

/** What every record keeps: its ID, the file it came from, and the record as written (shown and diffed field by field). */
export interface RecordBase {
  id: string;
  file: string;
  /** The record as the format wrote it. */
  source: unknown;
}

export interface EvidenceRecord extends RecordBase {
  /** One line for the reviewer: where it came from and what was seen. */
  summary: string;
}

export interface FindingRecord extends RecordBase {
  summary: string;
  evidence: string[];
  /** Further facts worth a reviewer's eye (`confidence`, `severity`, `status`), as label → text. */
  facts: Array<[string, string]>;
}

export type UnknownStatus = "open" | "resolved" | "deferred";

export interface UnknownRecord extends RecordBase {
  question: string;
  status: UnknownStatus;
  owner?: string;
}

export interface ActionRecord extends RecordBase {
  summary: string;
  /** What the action changes, as text (null when the format does not say). */
  target: string | null;
  risk: string | null;
  rollback: string | null;
  findings: string[];
  dependsOn: string[];
  verifies: string[];
}

export interface CriterionRecord extends RecordBase {
  statement: string;
  method: string | null;
}

/** A `!STOP:{reason}`: any unresolved one makes the handoff not ready. */
export interface StopRecord {
  reason: string;
  resolved: boolean;
  notes?: string;
  file: string;
}

/** One problem met reading or checking a handoff, naming its file and, where there is one, the record. */
export interface ReadinessProblem {
  file: string;
  record?: string;
  message: string;
}

/** An empty model of `format`: nothing read yet. */
export function emptyModel(format: HandoffFormatName): HandoffModel {
  return {
    format,
    evidence: [],
    findings: [],
    unknowns: [],
    actions: [],
    criteria: [],
    stops: [],
    recordFiles: [],
    loaded: { evidence: false, findings: false, unknowns: false, actions: false, criteria: false, stops: false },
  };
}

/** A format-native value as one line of text for the reviewer: strings as they are, lists joined, objects as `key: value`. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(describeValue).join(", ");
  if (typeof value === "object")
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${typeof v === "object" && v !== null ? JSON.stringify(v) : describeValue(v)}`)
      .join("; ");
  return String(value);
}
