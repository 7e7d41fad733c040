import { closeSync, fstatSync, readFileSync } from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { describeJsonError, requireShallowJson } from "../input/parse-input.js";
import { openRegularFile, readFailureCode } from "../input/read-regular-file.js";
import { type HandoffRecords, MARKERS, RECORD_FILES, type RecordFile } from "./handoff-records.js";
import { listHandoffFiles } from "./hash-handoff.js";

/** One readiness problem, naming its file and, where there is one, the record. */
export interface ReadinessProblem {
  file: string;
  record?: string;
  message: string;
}

/** The readiness report of SPEC §4. `records` is present when all four files parsed. */
export interface ReadinessReport {
  ready: boolean;
  dir: string;
  problems: ReadinessProblem[];
  /** Open `?UNKNOWN` records: listed for the reviewer, not blocking. */
  openUnknowns: Array<{ id: string; question: string; owner?: string }>;
  /** Unresolved `!STOP` reasons of the action plan: each makes the handoff not ready. */
  unresolvedStops: string[];
  counts: { evidence: number; findings: number; unknowns: number; actions: number; criteria: number; files: number };
  records?: HandoffRecords;
}

/** Marker IDs that name the marker itself in prose (e.g. `+ACTION:{id}`, `+ACTION:ID`), not a record. */
const PLACEHOLDER_IDS = new Set(["id", "ID"]);

/** Largest record file read. */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;

/**
 * Check a handoff folder is ready to freeze (SPEC §4): the four record files
 * present and valid; IDs unique within each kind; every citation resolves
 * (findings→evidence, actions→findings, actions→criteria, depends_on→actions)
 * whether written bare or as its marker; dependencies acyclic; and no
 * unresolved `!STOP`. Never throws for bad content; a folder that cannot be
 * listed (symlink, not a folder), or a FIFO, socket, device or link found in
 * it, throws a UsageError at once.
 */
export function checkReadiness(dir: string): ReadinessReport {
  const root = path.resolve(dir);
  const files = listHandoffFiles(root);
  const problems: ReadinessProblem[] = [];
  const parsed: Partial<Record<RecordFile, unknown>> = {};
  for (const [name, schema] of Object.entries(RECORD_FILES) as Array<[RecordFile, z.ZodType]>) {
    if (!files.includes(name)) {
      problems.push({ file: name, message: `missing: a handoff needs ${name}` });
      continue;
    }
    const read = readRecordText(path.join(root, name));
    if (read.problem !== undefined) {
      problems.push({ file: name, message: read.problem });
      continue;
    }
    let data: unknown;
    try {
      const text = read.text;
      if (text.includes("\u0000")) throw new SyntaxError("contains a NUL byte");
      data = JSON.parse(text);
    } catch (error) {
      problems.push({ file: name, message: `not valid JSON: ${describeJsonError(error)}` });
      continue;
    }
    try {
      requireShallowJson(data, name);
    } catch (error) {
      problems.push({ file: name, message: (error as Error).message });
      continue;
    }
    const result = schema.safeParse(data);
    if (!result.success) {
      for (const issue of result.error.issues.slice(0, 20)) {
        problems.push({
          file: name,
          record: recordAt(data, issue.path),
          message: `${issue.path.join(".") || "(top level)"}: ${issue.message}`,
        });
      }
      continue;
    }
    parsed[name] = result.data;
  }

  const counts = { evidence: 0, findings: 0, unknowns: 0, actions: 0, criteria: 0, files: files.length };
  const evidence = parsed["evidence_index.json"] as HandoffRecords["evidence"] | undefined;
  const findings = parsed["finding_register.json"] as HandoffRecords["findings"] | undefined;
  const actions = parsed["action_plan.json"] as HandoffRecords["actions"] | undefined;
  const criteria = parsed["acceptance_criteria.json"] as HandoffRecords["criteria"] | undefined;

  const ids = (file: string, kind: string, list: Array<{ id: string }> | undefined) => {
    const set = new Set<string>();
    for (const r of list ?? []) {
      if (set.has(r.id)) problems.push({ file, record: r.id, message: `duplicate ${kind} ID ${r.id}; IDs must be unique` });
      set.add(r.id);
    }
    return set;
  };
  const evidenceIds = ids("evidence_index.json", "evidence", evidence?.evidence);
  const findingIds = ids("finding_register.json", "finding", findings?.findings);
  ids("finding_register.json", "unknown", findings?.unknowns);
  const actionIds = ids("action_plan.json", "action", actions?.actions);
  const criterionIds = ids("acceptance_criteria.json", "criterion", criteria?.criteria);

  const resolve = (file: string, owner: string, field: string, refs: string[], marker: string, known: Set<string> | undefined) => {
    for (const ref of refs) {
      const id = stripMarker(ref, marker);
      if (id === undefined) {
        problems.push({
          file,
          record: owner,
          message: `${field} cites ${JSON.stringify(ref)}, which is not a ${marker.slice(0, -1)} reference; write the bare ID or ${marker}ID`,
        });
      } else if (known && !known.has(id)) {
        problems.push({ file, record: owner, message: `${field} cites ${marker}${id}, which does not exist` });
      }
    }
  };
  for (const f of findings?.findings ?? [])
    resolve("finding_register.json", f.id, "evidence", f.evidence, MARKERS.evidence, evidence ? evidenceIds : undefined);
  for (const a of actions?.actions ?? []) {
    resolve("action_plan.json", a.id, "findings", a.findings, MARKERS.finding, findings ? findingIds : undefined);
    resolve("action_plan.json", a.id, "verifies", a.verifies, MARKERS.criterion, criteria ? criterionIds : undefined);
    resolve("action_plan.json", a.id, "depends_on", a.depends_on, MARKERS.action, actionIds);
    if (a.depends_on.some((d) => stripMarker(d, MARKERS.action) === a.id))
      problems.push({ file: "action_plan.json", record: a.id, message: "depends_on names the action itself" });
  }
  if (actions) {
    const cycle = findDependencyCycle(
      actions.actions.map((a) => ({ id: a.id, deps: a.depends_on.map((d) => stripMarker(d, MARKERS.action) ?? d) })),
    );
    if (cycle)
      problems.push({
        file: "action_plan.json",
        record: cycle[0],
        message: `depends_on cycle: ${cycle.map((id) => `${MARKERS.action}${id}`).join(" → ")}`,
      });
  }
  // Markdown files (report.md and the like) cite records with markers too: each must exist.
  const unknownIds = new Set((findings?.unknowns ?? []).map((u) => u.id));
  const known: Array<[string, Set<string>, boolean]> = [
    [MARKERS.evidence, evidenceIds, evidence !== undefined],
    [MARKERS.unknown, unknownIds, findings !== undefined],
    [MARKERS.finding, findingIds, findings !== undefined],
    [MARKERS.action, actionIds, actions !== undefined],
    [MARKERS.criterion, criterionIds, criteria !== undefined],
  ];
  for (const file of files.filter((f) => f.endsWith(".md"))) {
    const read = readRecordText(path.join(root, ...file.split("/")));
    if (read.problem !== undefined) {
      problems.push({ file, message: read.problem });
      continue;
    }
    for (const [marker, ids, loaded] of known) {
      if (!loaded) continue;
      const pattern = new RegExp(`${marker.replace(/[?+=#@]/g, (c) => `\\${c}`)}([A-Za-z0-9][A-Za-z0-9._-]*)`, "g");
      const missing = new Set<string>();
      for (const m of read.text.matchAll(pattern)) {
        // A sentence may end right after a marker: a trailing dot is punctuation, not part of the ID.
        const id = (m[1] as string).replace(/[.]+$/, "");
        if (!ids.has(id) && !PLACEHOLDER_IDS.has(id)) missing.add(id);
      }
      for (const id of missing) problems.push({ file, message: `cites ${marker}${id}, which does not exist in the records` });
    }
  }
  const unresolvedStops = (actions?.stops ?? []).filter((s) => !s.resolved).map((s) => s.reason);
  for (const reason of unresolvedStops) {
    problems.push({
      file: "action_plan.json",
      message: `unresolved !STOP:${reason}; resolve it (set resolved: true with notes) before freezing`,
    });
  }
  const openUnknowns = (findings?.unknowns ?? [])
    .filter((u) => u.status === "open")
    .map((u) => ({ id: u.id, question: u.question, ...(u.owner ? { owner: u.owner } : {}) }));

  counts.evidence = evidence?.evidence.length ?? 0;
  counts.findings = findings?.findings.length ?? 0;
  counts.unknowns = findings?.unknowns.length ?? 0;
  counts.actions = actions?.actions.length ?? 0;
  counts.criteria = criteria?.criteria.length ?? 0;
  const records = evidence && findings && actions && criteria ? { evidence, findings, actions, criteria } : undefined;
  return { ready: problems.length === 0, dir: root, problems, openUnknowns, unresolvedStops, counts, ...(records ? { records } : {}) };
}

/**
 * A record file's text, or the problem that stops it being read (too large,
 * unreadable). `listHandoffFiles` refused links and special files; opening
 * the file again without following a link and without blocking refuses, as a
 * UsageError, one swapped in since, instead of waiting on a FIFO.
 */
function readRecordText(abs: string): { text: string; problem?: undefined } | { problem: string } {
  let fd: number;
  try {
    fd = openRegularFile(abs, "handoff record", { noFollow: true, fix: "replace it with the JSON record file, or remove it" });
  } catch (error) {
    const code = readFailureCode(error);
    if (code === undefined) throw error;
    return { problem: `cannot read (${code}); fix its permissions` };
  }
  try {
    if (fstatSync(fd).size > MAX_RECORD_BYTES)
      return { problem: `over ${MAX_RECORD_BYTES} bytes; keep bulky evidence in separate files and cite them` };
    return { text: readFileSync(fd, "utf8") };
  } catch (error) {
    return { problem: `cannot read (${readFailureCode(error) ?? "error"}); fix its permissions` };
  } finally {
    closeSync(fd);
  }
}

/** `E1` or `@EVIDENCE:E1` → `E1`; a reference written with another kind's marker → undefined. */
export function stripMarker(ref: string, marker: string): string | undefined {
  if (ref.startsWith(marker)) return ref.slice(marker.length);
  if (/^[@?#+=!][A-Z]+:/.test(ref)) return undefined;
  return ref;
}

function findDependencyCycle(nodes: Array<{ id: string; deps: string[] }>): string[] | undefined {
  const deps = new Map(nodes.map((n) => [n.id, n.deps]));
  const colour = new Map<string, 1 | 2>();
  for (const start of deps.keys()) {
    if (colour.has(start)) continue;
    const stack: Array<{ id: string; i: number }> = [{ id: start, i: 0 }];
    const trail: string[] = [start];
    colour.set(start, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { id: string; i: number };
      const list = deps.get(top.id) ?? [];
      if (top.i < list.length) {
        const next = list[top.i++] as string;
        if (!deps.has(next)) continue;
        const c = colour.get(next);
        if (c === 1) return [...trail.slice(trail.indexOf(next)), next];
        if (c === undefined) {
          colour.set(next, 1);
          stack.push({ id: next, i: 0 });
          trail.push(next);
        }
        continue;
      }
      colour.set(top.id, 2);
      stack.pop();
      trail.pop();
    }
  }
  return undefined;
}

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
