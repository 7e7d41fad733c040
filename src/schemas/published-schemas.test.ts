import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { demoHandoffRecords } from "../demo/demo-handoff.js";
import { PUBLISHED_SCHEMAS, renderSchema } from "./published-schemas.js";

const dir = path.resolve(import.meta.dirname, "../../schemas");

describe("published JSON Schemas", () => {
  for (const [name, schema] of Object.entries(PUBLISHED_SCHEMAS)) {
    it(`schemas/${name} matches the zod schema it is generated from (run npm run schemas after changing a schema)`, () => {
      expect(readFileSync(path.join(dir, name), "utf8")).toBe(renderSchema(name, schema));
    });
  }

  it("accepts the demo handoff records and rejects a finding without evidence", () => {
    const ajv = new Ajv2020.default({ strict: false });
    const load = (n: string) => ajv.compile(JSON.parse(readFileSync(path.join(dir, n), "utf8")));
    const records = demoHandoffRecords();
    expect(load("evidence-index.schema.json")(records.evidence)).toBe(true);
    expect(load("action-plan.schema.json")(records.actions)).toBe(true);
    expect(load("acceptance-criteria.schema.json")(records.criteria)).toBe(true);
    const findings = load("finding-register.schema.json");
    expect(findings(records.findings)).toBe(true);
    expect(findings({ findings: [{ id: "F1", summary: "x", evidence: [] }], unknowns: [] })).toBe(false);
  });

  it("the published twinlock.yaml schema accepts each handoff format and refuses an unknown one", () => {
    const ajv = new Ajv2020.default({ strict: false });
    const config = ajv.compile(JSON.parse(readFileSync(path.join(dir, "twinlock-config.schema.json"), "utf8")));
    expect(config({ handoff: { format: "mission-directives" } })).toBe(true);
    const list = (file: string) => ({ file, list: "/items", id: "/id" });
    const custom = {
      format: "custom",
      schemas: { "plan.json": "schemas/plan.schema.json" },
      evidence: list("plan.json"),
      findings: { ...list("plan.json"), evidence: "/seen" },
      actions: { ...list("plan.json"), findings: "/because" },
      criteria: list("plan.json"),
      stops: "markdown",
    };
    expect(config({ handoff: custom })).toBe(true);
    expect(config({ handoff: { format: "yaml" } })).toBe(false);
    expect(config({ handoff: { ...custom, extra: 1 } })).toBe(false);
  });
});
