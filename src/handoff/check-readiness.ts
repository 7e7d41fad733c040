import path from "node:path";
import { cleanText, findHiddenInName } from "../input/clean-text.js";
import type { HandoffFormatName } from "../suite/suite-config.js";
import { hasParentPart, targetPath } from "./action-target-path.js";
import { TWINLOCK_FORMAT } from "./formats/twinlock-format.js";
import type { HandoffFormat } from "./handoff-format.js";
import type { HandoffModel, ReadinessProblem } from "./handoff-model.js";
import { MARKERS, STOP_REASON_PATTERN } from "./handoff-records.js";
import { folderSource, type HandoffSource } from "./handoff-source.js";
import { hardLinksProblem } from "./hash-handoff.js";
import { markdownCitations } from "./markdown-markers.js";

export type { ReadinessProblem } from "./handoff-model.js";
export { MAX_RECORD_BYTES } from "./handoff-source.js";

/** The readiness report of SPEC §4, over the handoff's model in its format. */
export interface ReadinessReport {
  ready: boolean;
  dir: string;
  /** The record format the handoff was read as. */
  format: HandoffFormatName;
  problems: ReadinessProblem[];
  /** Open `?UNKNOWN` records: listed for the reviewer, not blocking. */
  openUnknowns: Array<{ id: string; question: string; owner?: string }>;
  /** Unresolved `!STOP` reasons: each makes the handoff not ready. */
  unresolvedStops: string[];
  counts: { evidence: number; findings: number; unknowns: number; actions: number; criteria: number; files: number };
  /** The records as the one model (kinds that could not be read are empty and not `loaded`). */
  model: HandoffModel;
}

/**
 * A readiness report without its model, as it crosses from a worker thread
 * (a model parsed from 16 MiB records would cost the receiving thread its
 * parse again): the action IDs the plan names stand in for it.
 */
export type ReadinessSummary = Omit<ReadinessReport, "model"> & { actionIds: string[] };

/** The summary of a report (see `ReadinessSummary`). */
export function summarizeReadiness(report: ReadinessReport): ReadinessSummary {
  const { model, ...rest } = report;
  return { ...rest, actionIds: model.actions.map((a) => a.id) };
}

/**
 * Check a handoff folder is ready to freeze (SPEC §4) in the given record
 * format (default: twinlock's own): the record files present and valid;
 * IDs unique within each kind; every citation resolves (findings→evidence,
 * actions→findings, actions→criteria, dependencies→actions) whether written
 * bare or as its marker, and so does every marker in a Markdown file;
 * dependencies acyclic; and no unresolved `!STOP`. Never throws for bad
 * content; a folder that cannot be listed (symlink, not a folder), or a
 * FIFO, socket, device or link found in it, throws a UsageError at once.
 */
export function checkReadiness(dir: string, format: HandoffFormat = TWINLOCK_FORMAT): ReadinessReport {
  const root = path.resolve(dir);
  const source = folderSource(root);
  return { ...judgeHandoff(source, format), dir: root };
}

/** Readiness over any source of a handoff's files (the live folder, or a frozen copy). */
export function judgeHandoff(source: HandoffSource, format: HandoffFormat): Omit<ReadinessReport, "dir"> {
  const { model, problems } = format.read(source);
  problems.push(...checkModel(model, source, problems));
  const unresolvedStops = model.stops.filter((s) => !s.resolved).map((s) => s.reason);
  const openUnknowns = model.unknowns
    .filter((u) => u.status === "open")
    .map((u) => ({ id: u.id, question: u.question, ...(u.owner ? { owner: u.owner } : {}) }));
  const counts = {
    evidence: model.evidence.length,
    findings: model.findings.length,
    unknowns: model.unknowns.length,
    actions: model.actions.length,
    criteria: model.criteria.length,
    files: source.files.length,
  };
  return { ready: problems.length === 0, format: model.format, problems, openUnknowns, unresolvedStops, counts, model };
}

/**
 * The checks every format shares, on the model alone: unique IDs, citations
 * that resolve, acyclic dependencies, Markdown markers that name records,
 * and no unresolved stop.
 */
function checkModel(model: HandoffModel, source: HandoffSource, earlier: readonly ReadinessProblem[]): ReadinessProblem[] {
  const problems: ReadinessProblem[] = [];
  const ids = (kind: string, list: Array<{ id: string; file: string }>) => {
    const set = new Set<string>();
    for (const r of list) {
      if (set.has(r.id)) problems.push({ file: r.file, record: r.id, message: `duplicate ${kind} ID ${r.id}; IDs must be unique` });
      set.add(r.id);
    }
    return set;
  };
  const evidenceIds = ids("evidence", model.evidence);
  const findingIds = ids("finding", model.findings);
  const unknownIds = ids("unknown", model.unknowns);
  const actionIds = ids("action", model.actions);
  const criterionIds = ids("criterion", model.criteria);
  const { loaded } = model;
  // `present` shows a changed record's field names: one the reviewer cannot read as written (a terminal escape, a
  // direction mark) could hide or forge the lines around it, so the plan is not ready with one.
  for (const r of [...model.evidence, ...model.findings, ...model.unknowns, ...model.actions, ...model.criteria]) {
    const odd = hiddenInKeys(r.source);
    if (odd)
      problems.push({
        file: r.file,
        record: r.id,
        message: `a field name holds ${odd.codePoint}, which a person would not see as written; rename the field`,
      });
  }

  // A target is what the hook lets the executor write: one that reads as a file and names its folder
  // (`cart/cache_race_test.go/..`) would be approved as the one and scope the other.
  for (const a of model.actions)
    if (a.target !== null && hasParentPart(targetPath(a.target)))
      problems.push({
        file: a.file,
        record: a.id,
        message: `the target ${JSON.stringify(cleanText(a.target).slice(0, 120))} holds a .. part; name the file or folder itself`,
      });

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
  const fields = FIELD_NAMES[model.format];
  for (const f of model.findings)
    resolve(f.file, f.id, fields.evidence, f.evidence, MARKERS.evidence, loaded.evidence ? evidenceIds : undefined);
  for (const a of model.actions) {
    resolve(a.file, a.id, fields.findings, a.findings, MARKERS.finding, loaded.findings ? findingIds : undefined);
    resolve(a.file, a.id, fields.verifies, a.verifies, MARKERS.criterion, loaded.criteria ? criterionIds : undefined);
    resolve(a.file, a.id, fields.dependsOn, a.dependsOn, MARKERS.action, actionIds);
    if (a.dependsOn.some((d) => stripMarker(d, MARKERS.action) === a.id))
      problems.push({ file: a.file, record: a.id, message: `${fields.dependsOn} names the action itself` });
  }
  if (loaded.actions) {
    const cycle = findDependencyCycle(
      model.actions.map((a) => ({ id: a.id, deps: a.dependsOn.map((d) => stripMarker(d, MARKERS.action) ?? d) })),
    );
    if (cycle)
      problems.push({
        file: model.actions.find((a) => a.id === cycle[0])?.file ?? "",
        record: cycle[0],
        message: `${fields.dependsOn} cycle: ${cycle.map((id) => `${MARKERS.action}${id}`).join(" → ")}`,
      });
  }
  // Markdown files (report.md and the like) cite records with markers too: each must exist.
  const known: Array<[string, Set<string>, boolean]> = [
    [MARKERS.evidence, evidenceIds, loaded.evidence],
    [MARKERS.unknown, unknownIds, loaded.unknowns],
    [MARKERS.finding, findingIds, loaded.findings],
    [MARKERS.action, actionIds, loaded.actions],
    [MARKERS.criterion, criterionIds, loaded.criteria],
  ];
  const unreadable = new Set(earlier.map((p) => p.file));
  const stopReasons = new Set(model.stops.map((st) => st.reason));
  const reported = new Set<string>();
  // Stops whose status word the format's reader could not read (it reported each): by file and reason.
  const unreadStatus = new Set(
    earlier.flatMap((p) => {
      const m = /^!STOP:([^ ]+) has status \(/.exec(p.message);
      return m ? [`${p.file}\0${m[1]}`] : [];
    }),
  );
  // A file name must read as itself: `present` shows it and `checkout` writes it (on a case-folding disk too).
  const folded = new Map<string, string>();
  for (const file of source.files) {
    // The freeze refuses a file with a second name (it may be a hard link to a file outside the handoff): so does readiness.
    const links = source.linkCount?.(file) ?? 1;
    if (links > 1) problems.push({ file: cleanText(file), message: hardLinksProblem(links) });
    const odd = findHiddenInName(file);
    if (odd)
      problems.push({
        file: cleanText(file),
        message: `the file name holds ${odd.codePoint}, which a person would not see as written; rename it`,
      });
    const key = file.normalize("NFC").toLowerCase();
    const twin = folded.get(key);
    if (twin !== undefined)
      problems.push({
        file: cleanText(file),
        message: `the file name differs from ${cleanText(twin)} only by case or Unicode form; on many disks they are one file — rename one`,
      });
    else folded.set(key, file);
  }
  for (const file of source.files.filter((f) => /\.(md|markdown)$/i.test(f))) {
    const read = source.read(file);
    if (read.problem !== undefined) {
      if (!unreadable.has(file)) problems.push({ file, message: read.problem });
      continue;
    }
    for (const c of markdownCitations(read.text)) {
      const entry = known.find(([m]) => m === c.marker);
      if (entry?.[2] && !entry[1].has(c.id))
        problems.push({ file, message: `cites ${c.marker}${c.id}, which does not exist in the records` });
    }
    // A stop a reviewer reads in the prose must be one the plan lists, so that it blocks until resolved: any spelling
    // (`!stop:`, `!STOP: reason`, capitals) counts, and one that is no stop reason at all is a problem too.
    for (const m of read.text.matchAll(/!stop:[ \t]*([^\s`*_)\]]*)/gi)) {
      const reason = (m[1] as string).replace(/[.,;:!?]+$/, "");
      if (/^\{.*\}$/.test(reason) || reason === "reason" || !loaded.stops || reported.has(`${file}\0${reason}`)) continue;
      reported.add(`${file}\0${reason}`);
      if (m[0].slice(0, 6) !== "!STOP:" || !STOP_REASON_PATTERN.test(reason))
        problems.push({
          file,
          message: `names a stop as ${JSON.stringify(m[0].slice(0, 60))}, which is not written !STOP:reason (lower-case letters, digits, dashes); write it so, as a stop of the plan`,
        });
      // A declaration whose status could not be read was reported as such: not again as a stop the plan lacks.
      else if (!stopReasons.has(reason) && !unreadStatus.has(`${file}\0${reason}`))
        problems.push({
          file,
          message: `names !STOP:${reason}, which is not a stop of the plan; list it as a stop (it then blocks until resolved) or remove it`,
        });
    }
  }
  for (const s of model.stops.filter((x) => !x.resolved)) {
    const how = s.file.endsWith(".md")
      ? `write !STOP:${s.reason} (resolved) with notes in ${s.file}`
      : model.format === "twinlock"
        ? "set resolved: true with notes"
        : `mark it resolved in ${s.file}`;
    problems.push({ file: s.file, message: `unresolved !STOP:${s.reason}; resolve it (${how}) before freezing` });
  }
  return problems;
}

/** How each format names the citation fields, so a problem names the field the planner wrote. */
const FIELD_NAMES: Record<HandoffFormatName, { evidence: string; findings: string; verifies: string; dependsOn: string }> = {
  twinlock: { evidence: "evidence", findings: "findings", verifies: "verifies", dependsOn: "depends_on" },
  "mission-directives": { evidence: "evidence_ids", findings: "finding_ids", verifies: "verification_ids", dependsOn: "dependencies" },
  custom: { evidence: "evidence", findings: "findings", verifies: "verifies", dependsOn: "depends_on" },
};

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

/** The first key, anywhere in a record's JSON, that holds a character a person would not see as written. */
function hiddenInKeys(value: unknown): { codePoint: string } | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const odd = hiddenInKeys(item);
      if (odd) return odd;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    const odd = findHiddenInName(key) ?? hiddenInKeys(child);
    if (odd) return odd;
  }
  return undefined;
}
