import { canonicalJson } from "../crypto/canonical-hash.js";
import { type BoundState, boundStringWithin, boundValueWithin } from "./bound-value.js";
import type { HandoffModel, StopRecord } from "./handoff-model.js";
import { MARKERS } from "./handoff-records.js";
import type { ManifestEntry } from "./hash-handoff.js";

/** One record that differs between two revisions, named by its marker (e.g. `+ACTION:A3`). */
export interface RecordChange {
  change: "added" | "removed" | "changed";
  marker: string;
  summary: string;
  /** For a changed record: each field that differs (as the format names it), with its old and new value. */
  fields?: Array<{ field: string; before: unknown; after: unknown }>;
}

type Kind = [string, (m: HandoffModel) => Array<{ id: string; file: string; source: unknown }>, (x: never) => string];

/** Each record kind of the model: its marker, its records, and the one line that sums a record up. */
const KINDS: Kind[] = [
  [MARKERS.evidence, (m) => m.evidence, (x: HandoffModel["evidence"][number]) => x.summary],
  [MARKERS.finding, (m) => m.findings, (x: HandoffModel["findings"][number]) => x.summary],
  [MARKERS.unknown, (m) => m.unknowns, (x: HandoffModel["unknowns"][number]) => `${x.question} (${x.status})`],
  [MARKERS.action, (m) => m.actions, (x: HandoffModel["actions"][number]) => x.summary],
  [MARKERS.criterion, (m) => m.criteria, (x: HandoffModel["criteria"][number]) => x.statement],
];

/**
 * What changed between two frozen revisions, record by record (by ID, in the
 * one model, whatever the format), plus each stop whose state changed and
 * any other file of the handoff added, removed or changed.
 */
export function diffRecords(
  before: HandoffModel | undefined,
  after: HandoffModel,
  beforeFiles: ManifestEntry[] = [],
  afterFiles: ManifestEntry[] = [],
): RecordChange[] {
  const out: RecordChange[] = [];
  for (const [marker, list, summary] of KINDS) {
    const sum = summary as (x: unknown) => string;
    const old = new Map((before ? list(before) : []).map((x) => [x.id, x]));
    const cur = new Map(list(after).map((x) => [x.id, x]));
    for (const [id, x] of cur) {
      const prev = old.get(id);
      if (!prev) out.push({ change: "added", marker: `${marker}${id}`, summary: sum(x) });
      else if (canonicalJson(prev.source) !== canonicalJson(x.source))
        out.push({ change: "changed", marker: `${marker}${id}`, summary: sum(x), fields: changedFields(prev.source, x.source) });
    }
    for (const [id, x] of old) if (!cur.has(id)) out.push({ change: "removed", marker: `${marker}${id}`, summary: sum(x) });
  }
  const stopKey = (s: StopRecord) => `${s.reason}:${s.resolved}`;
  const oldStops = new Set((before?.stops ?? []).map(stopKey));
  for (const s of after.stops)
    if (!oldStops.has(stopKey(s)))
      out.push({ change: "changed", marker: `!STOP:${s.reason}`, summary: s.resolved ? "resolved" : "unresolved" });
  const recordFiles = new Set([...(before?.recordFiles ?? []), ...after.recordFiles]);
  const oldFiles = new Map(beforeFiles.map((f) => [f.path, f.sha256]));
  const newFiles = new Map(afterFiles.map((f) => [f.path, f.sha256]));
  // A record file can change outside its records (a Mission Directives file's `environment`): each changed record file
  // is named too, so "what changed" never reads as less than the executor will read.
  const changedMarkers = new Set(out.map((c) => c.marker));
  const filesOfChangedRecords = new Set(
    [...(before ? markedRecords(before) : []), ...markedRecords(after)].filter((r) => changedMarkers.has(r.marker)).map((r) => r.file),
  );
  // Said even when some of its records changed too: a change outside them would otherwise hide behind theirs.
  for (const p of recordFiles)
    if (oldFiles.has(p) && newFiles.has(p) && oldFiles.get(p) !== newFiles.get(p))
      out.push({
        change: "changed",
        marker: `file ${p}`,
        summary: filesOfChangedRecords.has(p)
          ? "its records named above, and anything else in it (its diff shows every line)"
          : "outside its records",
      });
  for (const [p, h] of newFiles) {
    if (recordFiles.has(p)) continue;
    if (!oldFiles.has(p)) out.push({ change: "added", marker: `file ${p}`, summary: "" });
    else if (oldFiles.get(p) !== h) out.push({ change: "changed", marker: `file ${p}`, summary: "" });
  }
  for (const p of oldFiles.keys())
    if (!recordFiles.has(p) && !newFiles.has(p)) out.push({ change: "removed", marker: `file ${p}`, summary: "" });
  return out;
}

/** The top-level fields of two versions of a record that differ, old and new (a record that is not an object is one field, `value`). */
function changedFields(before: unknown, after: unknown): Array<{ field: string; before: unknown; after: unknown }> {
  const obj = (v: unknown) => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v });
  const a = obj(before);
  const b = obj(after);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys
    .filter((k) => canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null))
    .map((k) => ({ field: k, before: a[k] ?? null, after: b[k] ?? null }));
}

/** Every record of a model, of every kind, by its marker, with the file it is in. */
function markedRecords(m: HandoffModel): Array<{ marker: string; file: string }> {
  return KINDS.flatMap(([marker, list]) => list(m).map((r) => ({ marker: `${marker}${r.id}`, file: r.file })));
}

/**
 * How much of a record diff is shown: the first `changes` changes, while
 * together they take at most `chars` characters (as boundValue counts
 * them); each change at most `changeChars`, each string of it `stringChars`,
 * its fields' values `items` items and `depth` levels deep. Two revisions of
 * 100,000 records each can differ in 200,000 changes: the rest are counted,
 * not shown.
 */
export const RECORD_DIFF_BUDGET = {
  changes: 200,
  chars: 64 * 1024,
  changeChars: 4 * 1024,
  stringChars: 1024,
  items: 50,
  depth: 6,
} as const;

export type RecordDiffBudget = { [K in keyof typeof RECORD_DIFF_BUDGET]: number };

/** A record diff as shown: its first changes within the budget, how many there are in all, and which shown ones had values cut. */
export interface BoundedRecordChanges {
  changes: RecordChange[];
  total: number;
  /** Markers of the shown changes whose summary or field values were cut. */
  cut: string[];
}

/** The first changes of `changes` within `budget` (see RECORD_DIFF_BUDGET), each cut to its share; cost bounded by the budget. */
export function boundRecordChanges(changes: readonly RecordChange[], budget: RecordDiffBudget = RECORD_DIFF_BUDGET): BoundedRecordChanges {
  const out: RecordChange[] = [];
  const cut: string[] = [];
  let used = 0;
  for (const c of changes) {
    if (out.length >= budget.changes) break;
    const state: BoundState = { left: budget.changeChars, cut: false };
    const marker = boundStringWithin(c.marker, budget.stringChars, state);
    const summary = boundStringWithin(c.summary, budget.stringChars, state);
    let fields: RecordChange["fields"];
    if (c.fields) {
      fields = [];
      for (const f of c.fields) {
        if (fields.length >= budget.items || state.left <= 0) {
          state.cut = true;
          break;
        }
        fields.push({
          field: boundStringWithin(f.field, budget.stringChars, state),
          before: boundValueWithin(f.before, budget, state),
          after: boundValueWithin(f.after, budget, state),
        });
      }
    }
    const size = budget.changeChars - state.left;
    if (used + size > budget.chars) break;
    used += size;
    out.push({ change: c.change, marker, summary, ...(fields ? { fields } : {}) });
    if (state.cut) cut.push(marker);
  }
  return { changes: out, total: changes.length, cut };
}
