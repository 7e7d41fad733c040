import { describeValue, type ReadinessProblem } from "../handoff-model.js";
import { RECORD_ID_PATTERN } from "../handoff-records.js";
import type { HandoffSource } from "../handoff-source.js";
import { getPointer } from "../json-pointer.js";
import type { JsonValidator } from "../json-schema-validator.js";
import { readJsonRecord } from "./read-json-record.js";

/** Most schema problems reported per file. */
const MAX_SCHEMA_PROBLEMS = 20;

/**
 * A record file read as JSON and checked against its JSON Schema; undefined
 * (with the problems pushed, each naming the record it is in) when it is
 * missing, not JSON or not valid.
 */
export function readValidatedJson(
  source: HandoffSource,
  file: string,
  validate: JsonValidator,
  idPointers: readonly string[],
  problems: ReadinessProblem[],
): unknown {
  const json = readJsonRecord(source, file, problems);
  if (!json) return undefined;
  const errors = validate(json.data);
  if (errors.length === 0) return json.data;
  for (const e of errors.slice(0, MAX_SCHEMA_PROBLEMS)) {
    const record = recordOnPath(json.data, e.path, idPointers);
    problems.push({ file, ...(record ? { record } : {}), message: `${e.path}: ${e.message}` });
  }
  if (errors.length > MAX_SCHEMA_PROBLEMS)
    problems.push({ file, message: `and ${errors.length - MAX_SCHEMA_PROBLEMS} more schema problems` });
  return undefined;
}

/** The ID of the innermost record on a dotted instance path, by any of the file's ID fields. */
function recordOnPath(data: unknown, dotted: string, idPointers: readonly string[]): string | undefined {
  if (dotted === "(top level)") return undefined;
  let node: unknown = data;
  let id: string | undefined;
  for (const key of dotted.split(".")) {
    if (node === null || typeof node !== "object") break;
    node = (node as Record<string, unknown>)[key];
    if (node === null || typeof node !== "object" || Array.isArray(node)) continue;
    for (const p of idPointers) {
      const v = getPointer(node, p);
      if (typeof v === "string") id = v;
    }
  }
  return id;
}

/** One record of a list, with its ID and where it is. */
export interface ListedRecord {
  id: string;
  item: unknown;
  /** `actions.2`: where in the file, for problems. */
  at: string;
}

/**
 * The records of one kind: the list at `list` in the file's JSON, each with
 * its ID at `id`. A list that is not a list, or an ID that is not a string
 * usable as a marker ID, is a problem; the record is then left out.
 */
export function listRecords(
  data: unknown,
  spec: { file: string; list: string; id: string },
  kind: string,
  problems: ReadinessProblem[],
): ListedRecord[] | undefined {
  const list = getPointer(data, spec.list);
  const where = spec.list === "" ? "(top level)" : spec.list.slice(1).replace(/\//g, ".");
  if (!Array.isArray(list)) {
    problems.push({
      file: spec.file,
      message: `${where}: expected the list of ${kind} records, found ${list === undefined ? "nothing" : typeof list}`,
    });
    return undefined;
  }
  const out: ListedRecord[] = [];
  list.forEach((item, i) => {
    const at = spec.list === "" ? String(i) : `${where}.${i}`;
    const id = getPointer(item, spec.id);
    if (typeof id !== "string" || id.length > 200 || !RECORD_ID_PATTERN.test(id)) {
      problems.push({
        file: spec.file,
        message: `${at}: the ${kind} ID at ${spec.id} is ${typeof id === "string" ? JSON.stringify(id.slice(0, 80)) : id === undefined ? "missing" : `a ${typeof id}`}; IDs are letters, digits, . _ - (starting with a letter or digit), so they can be written as markers`,
      });
      return;
    }
    out.push({ id, item, at });
  });
  return out;
}

/** The citations at `pointer` of a record: a list of strings; absent is none; anything else a problem. */
export function citationsAt(
  r: ListedRecord,
  pointer: string | undefined,
  field: string,
  file: string,
  problems: ReadinessProblem[],
): string[] {
  if (pointer === undefined) return [];
  const value = getPointer(r.item, pointer);
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v.length === 0 || v.length > 220)) {
    problems.push({ file, record: r.id, message: `${field} (${pointer}) must be a list of IDs` });
    return [];
  }
  return value as string[];
}

/** The text at `pointer` of a record for the reviewer, or null when the format has none there. */
export function textAt(r: ListedRecord, pointer: string | undefined): string | null {
  if (pointer === undefined) return null;
  const value = getPointer(r.item, pointer);
  if (value === undefined || value === null) return null;
  const text = describeValue(value);
  return text === "" ? null : text;
}
