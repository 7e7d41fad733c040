import { describeValue, type RecordBase } from "./handoff-model.js";

/**
 * The top-level fields of a record as written whose values the reviewer's
 * view of the record (the model's own fields: summary, target, facts,
 * citations…) does not already show, as field name → text (a string as it
 * is, anything else as JSON). A format may allow fields beyond the model's
 * (twinlock's `notes`, any field of a Mission Directives record): the
 * executor reads them, so the reviewer is shown them too. An absent value
 * (null) hides nothing and is left out.
 */
export function unshownFields(record: RecordBase): Array<[string, string]> {
  const source = record.source;
  if (source === null || typeof source !== "object" || Array.isArray(source)) return [];
  const shown = shownStrings(record);
  const out: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(source as Record<string, unknown>)) {
    if (value === null || value === undefined) continue;
    if (typeof value === "string" && isShown(value, shown)) continue;
    if (Array.isArray(value) && value.every((v) => typeof v === "string" && isShown(v, shown))) continue;
    // A mapping the model keeps as its text (a Mission Directives action's `risk: {level, rationale}` is the view's
    // "level: …; rationale: …") is shown whole; listing it again as JSON only doubled it.
    if (typeof value === "object" && !Array.isArray(value) && shown.includes(describeValue(value))) continue;
    out.push([key, typeof value === "string" ? value : JSON.stringify(value)]);
  }
  return out;
}

/**
 * unshownFields on the record's one line, after its text: ` — key: value;
 * key: value`, each part made safe by `show` (cleaned for a terminal, escaped
 * for a page), or "" when the view shows every field.
 */
export function unshownFieldsAfter(record: RecordBase, show: (text: string) => string): string {
  const fields = unshownFields(record);
  return fields.length === 0 ? "" : ` — ${fields.map(([key, value]) => `${show(key)}: ${show(value)}`).join("; ")}`;
}

/** Every string the model keeps of a record (what its view shows), but the record as written and its file. */
function shownStrings(record: RecordBase): string[] {
  const out: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) for (const x of v) collect(x);
  };
  for (const [key, value] of Object.entries(record)) if (key !== "source" && key !== "file") collect(value);
  return out;
}

/**
 * Shown as such, or as a whole part of a line the view builds from several
 * fields (an evidence summary is `source: observed`, or `kind location: said
 * (trust: …)`): the value starts the line or follows `: ` or `(`, and ends it
 * or is followed by `: `, ` (` or `)`. Inside a sentence it is not shown:
 * "delete the production database" is not what "Never delete the production
 * database during the fix" says.
 */
function isShown(value: string, shown: readonly string[]): boolean {
  if (value === "") return true;
  for (const s of shown) {
    if (s === value) return true;
    for (let at = s.indexOf(value); at !== -1; at = s.indexOf(value, at + 1)) {
      const before = s.slice(0, at);
      const after = s.slice(at + value.length);
      if ((before === "" || before.endsWith(": ") || before.endsWith("(")) && (after === "" || /^(?:: | \(|\))/.test(after))) return true;
    }
  }
  return false;
}
