import { type BoundState, boundStringWithin, boundValueWithin } from "../handoff/bound-value.js";
import type { HandoffModel, RecordKind } from "../handoff/handoff-model.js";
import { MARKERS } from "../handoff/handoff-records.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";

/**
 * How much of a revision's records `present`, the plan API, the revision
 * page and the MCP plan resource show, whatever the size of the records
 * (a record file may hold 16 MiB, 100,000 records). Of each kind (evidence,
 * findings, …) the first `records` records are shown, while together they
 * take at most `kindChars` characters (strings and keys by their length);
 * one record takes at most `recordChars`, each string of it `stringChars`
 * (a longer one is shown by its head and said to be cut), each list or
 * object its first `items`, `depth` levels deep. A presentation is then at
 * most six kinds × `kindChars` of records, however large the handoff;
 * what is not shown is said, with the sha256 of every record file.
 */
export const RECORD_SHOW_BUDGET = {
  records: 500,
  kindChars: 48 * 1024,
  recordChars: 8 * 1024,
  stringChars: 2 * 1024,
  items: 100,
  depth: 8,
} as const;

export type RecordShowBudget = { [K in keyof typeof RECORD_SHOW_BUDGET]: number };

/** The record kinds, in the order the model lists them, each with the marker its records are named by. */
export const RECORD_KINDS: ReadonlyArray<[kind: RecordKind, marker: string]> = [
  ["evidence", MARKERS.evidence],
  ["findings", MARKERS.finding],
  ["unknowns", MARKERS.unknown],
  ["actions", MARKERS.action],
  ["criteria", MARKERS.criterion],
  ["stops", "!STOP:"],
];

/** One kind of record not shown whole: how many it holds and how many of them (the first) are shown. */
export interface KindShown {
  kind: RecordKind;
  shown: number;
  total: number;
}

/** What of the records is not shown, and where all of them are: null in a presentation that shows every record whole. */
export interface RecordsNotShown {
  /** Each kind of which not every record is shown. */
  kinds: KindShown[];
  /** The records shown with a value cut (a long string by its head, a long list by its first items), by marker. */
  cut: string[];
  /** Each file holding a record not shown whole, with its size and sha256, and where the gate home keeps its bytes. */
  recordFiles: Array<{ path: string; size: number; sha256: string; frozenAt: string }>;
}

/** A revision's records as shown: the first of each kind within the budget, how many each kind holds, and what is not shown. */
export interface PresentedRecords {
  /** The records shown: each kind's first records, each whole unless named in `notShown.cut`. */
  model: HandoffModel;
  /** How many records of each kind the revision holds. */
  totals: Record<RecordKind, number>;
  /** How many findings no action addresses, of all the revision's. */
  unaddressed: number;
  /** The shown evidence no finding of the revision cites (by ID), and the shown findings no action addresses. */
  uncitedShown: string[];
  unaddressedShown: string[];
  notShown: RecordsNotShown | null;
}

/**
 * The records of `model` within `budget` (see RECORD_SHOW_BUDGET), the first
 * of each kind in order; `files` are the revision's manifest, from which the
 * record files are named. One pass over the model; the cost past that is
 * bounded by the budget.
 */
export function presentRecords(
  model: HandoffModel,
  files: readonly ManifestEntry[],
  budget: RecordShowBudget = RECORD_SHOW_BUDGET,
): PresentedRecords {
  const shown: HandoffModel = { ...model, recordFiles: [...model.recordFiles] };
  const kinds: KindShown[] = [];
  const cut: string[] = [];
  // The files holding a record not shown whole: the ones a reviewer must open to read the rest.
  const holding = new Set<string>();
  const totals = {} as Record<RecordKind, number>;
  for (const [kind, marker] of RECORD_KINDS) {
    const all = model[kind] as unknown as Array<Record<string, unknown>>;
    totals[kind] = all.length;
    const out: Array<Record<string, unknown>> = [];
    let used = 0;
    for (const record of all) {
      if (out.length >= budget.records) break;
      const b = boundRecord(record, budget);
      if (used + b.size > budget.kindChars) break;
      used += b.size;
      out.push(b.record);
      if (b.cut) {
        cut.push(`${marker}${String(kind === "stops" ? b.record.reason : b.record.id)}`);
        holding.add(String(record.file));
      }
    }
    (shown as unknown as Record<string, unknown>)[kind] = out;
    if (out.length < all.length) kinds.push({ kind, shown: out.length, total: all.length });
  }
  const bare = (ref: string, m: string) => (ref.startsWith(m) ? ref.slice(m.length) : ref);
  const cited = new Set<string>();
  for (const f of model.findings) for (const x of f.evidence) cited.add(bare(x, MARKERS.evidence));
  const addressed = new Set<string>();
  for (const a of model.actions) for (const x of a.findings) addressed.add(bare(x, MARKERS.finding));
  for (const { kind, shown: n } of kinds) for (const r of (model[kind] as Array<{ file: string }>).slice(n)) holding.add(r.file);
  const recordFiles = files
    .filter((f) => holding.has(f.path))
    .map((f) => ({ path: f.path, size: f.size, sha256: f.sha256, frozenAt: `blobs/${f.sha256.slice(0, 2)}/${f.sha256}` }));
  const whole = kinds.length === 0 && cut.length === 0;
  return {
    model: shown,
    totals,
    unaddressed: model.findings.filter((f) => !addressed.has(f.id)).length,
    uncitedShown: shown.evidence.filter((e) => !cited.has(e.id)).map((e) => e.id),
    unaddressedShown: shown.findings.filter((f) => !addressed.has(f.id)).map((f) => f.id),
    notShown: whole ? null : { kinds, cut, recordFiles },
  };
}

/**
 * One record within the budget: each field of the model (its text, its
 * citations) kept as the type it is, cut if long; then the record as written
 * (`source`) with what is left of `recordChars`.
 */
function boundRecord(
  record: Record<string, unknown>,
  budget: RecordShowBudget,
): { record: Record<string, unknown>; cut: boolean; size: number } {
  const state: BoundState = { left: budget.recordChars - 2, cut: false };
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    if (key === "source") continue;
    const value = record[key];
    // The model's own field names, counted as boundValue counts a key (they are few and short).
    state.left -= key.length + 1;
    if (typeof value === "string") out[key] = boundStringWithin(value, budget.stringChars, state);
    else if (Array.isArray(value)) {
      const items: unknown[] = [];
      for (const item of value) {
        if (items.length >= budget.items || state.left <= 0) {
          state.cut = true;
          break;
        }
        // A citation is text; a fact is a [label, text] pair: each stays that shape.
        items.push(
          typeof item === "string"
            ? boundStringWithin(item, budget.stringChars, state)
            : Array.isArray(item)
              ? item.map((x) => boundStringWithin(String(x), budget.stringChars, state))
              : boundValueWithin(item, budget, state),
        );
        state.left -= Array.isArray(item) ? 2 : 0;
      }
      state.left -= 2;
      out[key] = items;
    } else if (value !== null && typeof value === "object") out[key] = boundValueWithin(value, budget, state);
    else {
      state.left -= String(value).length + 1;
      out[key] = value;
    }
  }
  if ("source" in record) {
    state.left -= "source".length + 1;
    out.source = boundValueWithin(record.source, budget, state);
  }
  return { record: out, cut: state.cut, size: budget.recordChars - state.left };
}

/**
 * What a reviewer must be told of records not shown whole, in plain
 * sentences (each front end marks them up): which kinds are shown in part
 * and how many of each, which records have values cut, that the decision
 * still binds the whole handoff by its hash, and where every record file is
 * whole. Null when every record is shown whole.
 */
export function describeRecordsNotShown(p: PresentedRecords, hash: string): string | null {
  const n = p.notShown;
  if (n === null) return null;
  const count = (x: number) => x.toLocaleString("en-US");
  const parts = n.kinds.map((k) => `${k.kind}: the first ${count(k.shown)} of ${count(k.total)}`);
  const cut =
    n.cut.length === 0
      ? ""
      : ` ${count(n.cut.length)} record${n.cut.length === 1 ? " is" : "s are"} shown with long values cut (${n.cut
          .slice(0, 5)
          .join(", ")}${n.cut.length > 5 ? ", …" : ""}).`;
  const files = n.recordFiles.map((f) => `${f.path} (${count(f.size)} bytes, sha256 ${f.sha256}, at ${f.frozenAt})`).join("; ");
  return `Not all of the records are shown${parts.length ? ` — ${parts.join("; ")}` : ""}.${cut} A decision is on the whole handoff, hash ${hash}, not on the part shown. All of them are in the frozen bytes in the gate home: ${files || "the record files"}; after admission, twinlock checkout writes a read-only copy of every byte.`;
}
