import { RefusalError } from "../../errors/errors.js";
import { findDuplicateJsonKey } from "../../input/duplicate-json-key.js";
import type { CustomHandoffConfig } from "../../suite/suite-config.js";
import type { HandoffFormat } from "../handoff-format.js";
import { emptyModel, type HandoffModel, type ReadinessProblem, type UnknownStatus } from "../handoff-model.js";
import { STOP_REASON_PATTERN } from "../handoff-records.js";
import type { HandoffSource } from "../handoff-source.js";
import { getPointer } from "../json-pointer.js";
import { compileJsonSchemas, type JsonValidator } from "../json-schema-validator.js";
import { markdownDeclarations } from "../markdown-markers.js";
import { citationsAt, type ListedRecord, listRecords, readValidatedJson, textAt } from "./mapped-records.js";
import { readMarkdownTexts } from "./read-json-record.js";

/**
 * A team's own format (SPEC §8): its JSON Schemas (the bytes given here were
 * read from the suite and, for a decision, checked against the pin) and the
 * mapping in `twinlock.yaml` of where each record kind, its ID and the fields
 * twinlock needs are. A schema that is not JSON, does not compile or `$ref`s
 * anything outside the listed schemas is a RefusalError now, not at freeze.
 */
export function customFormat(config: CustomHandoffConfig, schemaBytes: ReadonlyMap<string, Buffer>): HandoffFormat {
  const schemaPaths = [...new Set(Object.values(config.schemas))].sort();
  const named = schemaPaths.map((p) => {
    const bytes = schemaBytes.get(p);
    if (!bytes) throw new RefusalError(`handoff schema ${p} was not read; it is named in twinlock.yaml handoff.schemas`);
    const text = bytes.toString("utf8");
    let schema: unknown;
    try {
      schema = JSON.parse(text);
    } catch (error) {
      throw new RefusalError(
        `handoff schema ${p} is not valid JSON (${(error as Error).message.split("\n")[0]}); fix it in the suite`,
        {},
        { cause: error },
      );
    }
    // JSON.parse keeps the last of two equal keys; a person reviewing the schema may read the first
    // (`"additionalProperties": false, …, "additionalProperties": true`).
    const twice = findDuplicateJsonKey(text);
    if (twice !== undefined)
      throw new RefusalError(`handoff schema ${p} has the key ${JSON.stringify(twice)} twice in one object; keep one`, {
        attack: "duplicate-json-key",
      });
    return { name: p, schema };
  });
  const compiled = compileJsonSchemas(named);
  const recordFiles = Object.keys(config.schemas).sort();
  return {
    name: "custom",
    recordFiles,
    markdownDeclares: (config.unknowns ?? "markdown") === "markdown" || (config.stops ?? "markdown") === "markdown",
    read: (source) => readCustom(config, compiled, recordFiles, source),
  };
}

function readCustom(
  config: CustomHandoffConfig,
  compiled: ReadonlyMap<string, JsonValidator>,
  recordFiles: readonly string[],
  source: HandoffSource,
): { model: HandoffModel; problems: ReadinessProblem[] } {
  const problems: ReadinessProblem[] = [];
  const mappings = [config.evidence, config.findings, config.actions, config.criteria, config.unknowns, config.stops];
  const data = new Map<string, unknown>();
  for (const file of recordFiles) {
    const idPointers = mappings.flatMap((m) => (m && m !== "markdown" && m.file === file && "id" in m ? [m.id] : []));
    const validate = compiled.get(config.schemas[file] as string) as JsonValidator;
    const d = readValidatedJson(source, file, validate, idPointers, problems);
    if (d !== undefined) data.set(file, d);
  }
  const model = emptyModel("custom");
  model.recordFiles = recordFiles.filter((f) => source.files.includes(f));
  const listOf = (m: { file: string; list: string; id: string }, kind: string): ListedRecord[] | undefined =>
    data.has(m.file) ? listRecords(data.get(m.file), m, kind, problems) : undefined;

  const ev = config.evidence;
  const evidence = listOf(ev, "evidence");
  if (evidence) {
    model.loaded.evidence = true;
    model.evidence = evidence.map((r) => ({ id: r.id, file: ev.file, source: r.item, summary: textAt(r, ev.summary) ?? "" }));
  }
  const fi = config.findings;
  const findings = listOf(fi, "finding");
  if (findings) {
    model.loaded.findings = true;
    model.findings = findings.map((r) => {
      const confidence = textAt(r, fi.confidence);
      return {
        id: r.id,
        file: fi.file,
        source: r.item,
        summary: textAt(r, fi.summary) ?? "",
        evidence: citationsAt(r, fi.evidence, `evidence`, fi.file, problems),
        facts: confidence === null ? [] : [["confidence", confidence]],
      };
    });
  }
  const ac = config.actions;
  const actions = listOf(ac, "action");
  if (actions) {
    model.loaded.actions = true;
    model.actions = actions.map((r) => ({
      id: r.id,
      file: ac.file,
      source: r.item,
      summary: textAt(r, ac.summary) ?? "",
      target: textAt(r, ac.target),
      risk: textAt(r, ac.risk),
      rollback: textAt(r, ac.rollback),
      findings: citationsAt(r, ac.findings, "findings", ac.file, problems),
      dependsOn: citationsAt(r, ac.depends_on, "depends_on", ac.file, problems),
      verifies: citationsAt(r, ac.verifies, "verifies", ac.file, problems),
    }));
  }
  const cr = config.criteria;
  const criteria = listOf(cr, "criterion");
  if (criteria) {
    model.loaded.criteria = true;
    model.criteria = criteria.map((r) => ({
      id: r.id,
      file: cr.file,
      source: r.item,
      statement: textAt(r, cr.summary) ?? "",
      method: textAt(r, cr.method),
    }));
  }

  const un = config.unknowns ?? "markdown";
  const st = config.stops ?? "markdown";
  const declared = un === "markdown" || st === "markdown" ? markdownDeclarations(readMarkdownTexts(source, problems)) : undefined;
  if (declared) problems.push(...declared.problems);
  if (un === "markdown") {
    model.unknowns = declared?.unknowns ?? [];
    model.loaded.unknowns = true;
  } else {
    const unknowns = listOf(un, "unknown");
    if (unknowns) {
      model.loaded.unknowns = true;
      const values = un.status_values ?? {};
      const statusOf = (v: unknown): UnknownStatus | undefined => {
        for (const s of ["open", "resolved", "deferred"] as const) if ((values[s] ?? [s]).some((x) => x === v)) return s;
        return undefined;
      };
      for (const r of unknowns) {
        const raw = getPointer(r.item, un.status);
        const status = statusOf(raw);
        if (!status) {
          const allowed = (["open", "resolved", "deferred"] as const).flatMap((s) => values[s] ?? [s]);
          problems.push({
            file: un.file,
            record: r.id,
            message: `status (${un.status}) is ${JSON.stringify(raw) ?? "missing"}; twinlock.yaml maps only ${allowed.map((x) => JSON.stringify(x)).join(", ")}`,
          });
          continue;
        }
        model.unknowns.push({ id: r.id, file: un.file, source: r.item, question: textAt(r, un.summary) ?? "", status });
      }
    }
  }
  if (st === "markdown") {
    model.stops = declared?.stops ?? [];
    model.loaded.stops = true;
  } else if (data.has(st.file)) {
    const list = getPointer(data.get(st.file), st.list);
    if (!Array.isArray(list)) problems.push({ file: st.file, message: `${st.list || "(top level)"}: expected the list of stops` });
    else {
      model.loaded.stops = true;
      list.forEach((item, i) => {
        const reason = getPointer(item, st.reason);
        const resolved = getPointer(item, st.resolved);
        if (typeof reason !== "string" || !STOP_REASON_PATTERN.test(reason) || typeof resolved !== "boolean") {
          problems.push({
            file: st.file,
            message: `stop ${i}: needs a reason slug at ${st.reason} (such as missing-backup) and true or false at ${st.resolved}`,
          });
          return;
        }
        model.stops.push({ reason, resolved, file: st.file });
      });
    }
  }
  return { model, problems };
}
