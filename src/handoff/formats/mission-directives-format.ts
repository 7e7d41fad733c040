import { readFileSync } from "node:fs";
import path from "node:path";
import { PACKAGE_ROOT } from "../../package-root.js";
import type { HandoffFormat } from "../handoff-format.js";
import { emptyModel, type HandoffModel, type ReadinessProblem } from "../handoff-model.js";
import type { HandoffSource } from "../handoff-source.js";
import { getPointer } from "../json-pointer.js";
import { compileJsonSchemas, type JsonValidator } from "../json-schema-validator.js";
import { markdownDeclarations } from "../markdown-markers.js";
import { citationsAt, listRecords, readValidatedJson, textAt } from "./mapped-records.js";
import { readMarkdownTexts } from "./read-json-record.js";

/** The record files of the public Mission Directives format, each with its vendored schema (`schemas/handoff-formats/`). */
const FILES = ["evidence_index.json", "finding_register.json", "action_plan.json", "acceptance_criteria.json"] as const;
type MdFile = (typeof FILES)[number];

/** The record files that carry `snapshot_id` (acceptance_criteria.json has none in the public schema). */
const SNAPSHOT_FILES: readonly MdFile[] = ["evidence_index.json", "finding_register.json", "action_plan.json"];

const ID_FIELDS: Record<MdFile, string> = {
  "evidence_index.json": "/evidence_id",
  "finding_register.json": "/finding_id",
  "action_plan.json": "/action_id",
  "acceptance_criteria.json": "/verification_id",
};

let validators: Map<string, JsonValidator> | undefined;

/** The four vendored schemas, compiled on first use (so only a suite of this format loads Ajv). */
function schemaValidators(): Map<string, JsonValidator> {
  if (!validators) {
    const dir = path.join(PACKAGE_ROOT, "schemas", "handoff-formats", "mission-directives");
    validators = compileJsonSchemas(
      FILES.map((f) => ({
        name: f,
        schema: JSON.parse(readFileSync(path.join(dir, f.replace(".json", ".schema.json")), "utf8")),
      })),
    );
  }
  return validators;
}

/**
 * The public Mission Directives format (SPEC §8), read as it is: the four
 * files checked by their own JSON Schemas (`sources[].evidence_id`,
 * `findings[].finding_id` + `evidence_ids`, `actions[].action_id` +
 * `finding_ids` + `dependencies` + `verification_ids`, `criteria[].verification_id`),
 * and the same `snapshot_id` on every record file that has one. The schemas
 * have no unknowns or stops: those are the `?UNKNOWN:` and `!STOP:` lines of
 * the handoff's Markdown files (see `markdownDeclarations`).
 */
export const MISSION_DIRECTIVES_FORMAT: HandoffFormat = {
  name: "mission-directives",
  recordFiles: FILES,
  markdownDeclares: true,
  read: readMissionDirectives,
};

function readMissionDirectives(source: HandoffSource): { model: HandoffModel; problems: ReadinessProblem[] } {
  const problems: ReadinessProblem[] = [];
  const v = schemaValidators();
  const data = new Map<MdFile, unknown>();
  for (const f of FILES) {
    const d = readValidatedJson(source, f, v.get(f) as JsonValidator, [ID_FIELDS[f]], problems);
    if (d !== undefined) data.set(f, d);
  }
  const model = emptyModel("mission-directives");
  model.recordFiles = FILES.filter((f) => source.files.includes(f));

  const evidenceFile = data.get("evidence_index.json");
  if (evidenceFile !== undefined) {
    const list = listRecords(evidenceFile, { file: "evidence_index.json", list: "/sources", id: "/evidence_id" }, "evidence", problems);
    if (list) {
      model.loaded.evidence = true;
      model.evidence = list.map((r) => {
        const said = textAt(r, "/summary");
        return {
          id: r.id,
          file: "evidence_index.json",
          source: r.item,
          summary: `${textAt(r, "/kind")} ${textAt(r, "/location")}${said ? `: ${said}` : ""} (trust: ${textAt(r, "/trust")})`,
        };
      });
    }
  }
  const findingFile = data.get("finding_register.json");
  if (findingFile !== undefined) {
    const file = "finding_register.json";
    const list = listRecords(findingFile, { file, list: "/findings", id: "/finding_id" }, "finding", problems);
    if (list) {
      model.loaded.findings = true;
      model.findings = list.map((r) => ({
        id: r.id,
        file,
        source: r.item,
        summary: textAt(r, "/title") ?? "",
        evidence: citationsAt(r, "/evidence_ids", "evidence_ids", file, problems),
        facts: (["severity", "status", "confidence", "reachability", "impact", "owner"] as const).flatMap((k): Array<[string, string]> => {
          const t = textAt(r, `/${k}`);
          return t === null ? [] : [[k, t]];
        }),
      }));
    }
  }
  const actionFile = data.get("action_plan.json");
  if (actionFile !== undefined) {
    const file = "action_plan.json";
    const list = listRecords(actionFile, { file, list: "/actions", id: "/action_id" }, "action", problems);
    if (list) {
      model.loaded.actions = true;
      model.actions = list.map((r) => ({
        id: r.id,
        file,
        source: r.item,
        summary: textAt(r, "/description") ?? "",
        target: textAt(r, "/change_surface"),
        risk: textAt(r, "/risk"),
        rollback: textAt(r, "/rollback"),
        findings: citationsAt(r, "/finding_ids", "finding_ids", file, problems),
        dependsOn: citationsAt(r, "/dependencies", "dependencies", file, problems),
        verifies: citationsAt(r, "/verification_ids", "verification_ids", file, problems),
      }));
    }
  }
  const criteriaFile = data.get("acceptance_criteria.json");
  if (criteriaFile !== undefined) {
    const file = "acceptance_criteria.json";
    const list = listRecords(criteriaFile, { file, list: "/criteria", id: "/verification_id" }, "criterion", problems);
    if (list) {
      model.loaded.criteria = true;
      model.criteria = list.map((r) => ({
        id: r.id,
        file,
        source: r.item,
        statement: `${textAt(r, "/statement") ?? ""}${getPointer(r.item, "/required") === false ? " (not required)" : ""}`,
        method: textAt(r, "/method"),
      }));
    }
  }
  checkSnapshots(data, problems);

  const declared = markdownDeclarations(readMarkdownTexts(source, problems));
  problems.push(...declared.problems);
  model.unknowns = declared.unknowns;
  model.stops = declared.stops;
  model.loaded.unknowns = true;
  model.loaded.stops = true;
  return { model, problems };
}

/** Every record file that has a `snapshot_id` names the same one: the handoff describes one snapshot. */
function checkSnapshots(data: ReadonlyMap<MdFile, unknown>, problems: ReadinessProblem[]): void {
  let first: { file: MdFile; id: unknown } | undefined;
  for (const file of SNAPSHOT_FILES) {
    if (!data.has(file)) continue;
    const id = getPointer(data.get(file), "/snapshot_id");
    if (!first) first = { file, id };
    else if (id !== first.id)
      problems.push({
        file,
        message: `snapshot_id ${JSON.stringify(id)} differs from ${first.file}'s ${JSON.stringify(first.id)}; every record file of one handoff describes the same snapshot`,
      });
  }
}
