import { canonicalJson } from "../crypto/canonical-hash.js";
import { type HandoffRecords, MARKERS } from "./handoff-records.js";
import type { ManifestEntry } from "./hash-handoff.js";

/** One record that differs between two revisions, named by its marker (e.g. `+ACTION:A3`). */
export interface RecordChange {
  change: "added" | "removed" | "changed";
  marker: string;
  summary: string;
  /** For a changed record: each field that differs, with its old and new value. */
  fields?: Array<{ field: string; before: unknown; after: unknown }>;
}

/**
 * What changed between two frozen revisions, record by record (by ID), plus
 * any other file of the handoff added, removed or changed.
 */
export function diffRecords(
  before: HandoffRecords | undefined,
  after: HandoffRecords,
  beforeFiles: ManifestEntry[] = [],
  afterFiles: ManifestEntry[] = [],
): RecordChange[] {
  const out: RecordChange[] = [];
  const kinds: Array<[string, (r: HandoffRecords) => Array<{ id: string }>, (x: Record<string, unknown>) => string]> = [
    [MARKERS.evidence, (r) => r.evidence.evidence, (x) => String(x.source)],
    [MARKERS.finding, (r) => r.findings.findings, (x) => String(x.summary)],
    [MARKERS.unknown, (r) => r.findings.unknowns, (x) => `${x.question} (${x.status})`],
    [MARKERS.action, (r) => r.actions.actions, (x) => String(x.summary)],
    [MARKERS.criterion, (r) => r.criteria.criteria, (x) => String(x.criterion)],
  ];
  for (const [marker, list, summary] of kinds) {
    const old = new Map((before ? list(before) : []).map((x) => [x.id, x]));
    const cur = new Map(list(after).map((x) => [x.id, x]));
    for (const [id, x] of cur) {
      const prev = old.get(id);
      if (!prev) out.push({ change: "added", marker: `${marker}${id}`, summary: summary(x as Record<string, unknown>) });
      else if (canonicalJson(prev) !== canonicalJson(x))
        out.push({
          change: "changed",
          marker: `${marker}${id}`,
          summary: summary(x as Record<string, unknown>),
          fields: changedFields(prev, x),
        });
    }
    for (const [id, x] of old)
      if (!cur.has(id)) out.push({ change: "removed", marker: `${marker}${id}`, summary: summary(x as Record<string, unknown>) });
  }
  const stopKey = (s: { reason: string; resolved: boolean }) => `${s.reason}:${s.resolved}`;
  const oldStops = new Set((before?.actions.stops ?? []).map(stopKey));
  for (const s of after.actions.stops)
    if (!oldStops.has(stopKey(s)))
      out.push({ change: "changed", marker: `!STOP:${s.reason}`, summary: s.resolved ? "resolved" : "unresolved" });
  const recordFiles = new Set(["evidence_index.json", "finding_register.json", "action_plan.json", "acceptance_criteria.json"]);
  const oldFiles = new Map(beforeFiles.map((f) => [f.path, f.sha256]));
  const newFiles = new Map(afterFiles.map((f) => [f.path, f.sha256]));
  for (const [p, h] of newFiles) {
    if (recordFiles.has(p)) continue;
    if (!oldFiles.has(p)) out.push({ change: "added", marker: `file ${p}`, summary: "" });
    else if (oldFiles.get(p) !== h) out.push({ change: "changed", marker: `file ${p}`, summary: "" });
  }
  for (const p of oldFiles.keys())
    if (!recordFiles.has(p) && !newFiles.has(p)) out.push({ change: "removed", marker: `file ${p}`, summary: "" });
  return out;
}

/** The top-level fields of two versions of a record that differ, old and new. */
function changedFields(before: object, after: object): Array<{ field: string; before: unknown; after: unknown }> {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys
    .filter((k) => canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null))
    .map((k) => ({ field: k, before: a[k] ?? null, after: b[k] ?? null }));
}
