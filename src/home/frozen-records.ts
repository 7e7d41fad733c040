import type { z } from "zod";
import { IntegrityError } from "../errors/errors.js";
import { type HandoffRecords, RECORD_FILES, type RecordFile } from "../handoff/handoff-records.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { readBlob } from "./frozen-bytes.js";
import type { GateHome } from "./gate-home.js";

const KEYS: Record<RecordFile, keyof HandoffRecords> = {
  "evidence_index.json": "evidence",
  "finding_register.json": "findings",
  "action_plan.json": "actions",
  "acceptance_criteria.json": "criteria",
};

/**
 * The records of a frozen revision, parsed from the frozen bytes in the gate
 * home (never from anything the run file copied): what the reviewer is shown
 * and what admission scopes actions by.
 */
export function readFrozenRecords(home: GateHome, files: readonly ManifestEntry[]): HandoffRecords {
  const out: Partial<Record<keyof HandoffRecords, unknown>> = {};
  for (const [name, schema] of Object.entries(RECORD_FILES) as Array<[RecordFile, z.ZodType]>) {
    const entry = files.find((f) => f.path === name);
    if (!entry) throw new IntegrityError(`the frozen handoff has no ${name}`);
    const parsed = schema.safeParse(JSON.parse(readBlob(home, entry).toString("utf8")));
    if (!parsed.success) throw new IntegrityError(`the frozen ${name} does not match its schema; the frozen bytes are damaged`);
    out[KEYS[name]] = parsed.data;
  }
  return out as HandoffRecords;
}

/** The +ACTION IDs of a frozen plan; none when its bytes cannot be read (admission then fails on the frozen-bytes check). */
export function frozenActionIds(home: GateHome, files: readonly ManifestEntry[]): string[] {
  try {
    return readFrozenRecords(home, files).actions.actions.map((a) => a.id);
  } catch {
    return [];
  }
}
