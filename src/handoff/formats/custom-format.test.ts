import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { RefusalError } from "../../errors/errors.js";
import { loadPinnedPolicy, pinSuite } from "../../home/suite-pins.js";
import { loadSuiteConfig } from "../../suite/load-suite.js";
import { runCli } from "../../test-support/run-cli.js";
import { makeGateRun, makeRunTempDir, pinForTest, removeGateRuns, TEST_PINNER, testHome } from "../../test-support/run-fixture.js";
import { checkReadiness } from "../check-readiness.js";
import { compileJsonSchemas } from "../json-schema-validator.js";
import { readFormatSchemas } from "../read-format-schemas.js";
import { selectHandoffFormat } from "../select-handoff-format.js";

afterAll(removeGateRuns);

/** A team's format: one plan file with steps, reasons and checks, one evidence file, stops as records. */
const CONFIG = `handoff:
  format: custom
  schemas:
    plan.json: handoff-schemas/plan.schema.json
    evidence.json: handoff-schemas/evidence.schema.json
  evidence: {file: evidence.json, list: /items, id: /ref, summary: /what}
  findings: {file: plan.json, list: /reasons, id: /key, summary: /text, evidence: /seen_in}
  actions:
    file: plan.json
    list: /steps
    id: /step
    summary: /do
    findings: /because
    depends_on: /after
    verifies: /checked_by
    target: /where
    risk: /risk/level
    rollback: /undo
  criteria: {file: plan.json, list: /checks, id: /id, summary: /expect, method: /how}
  unknowns: {file: plan.json, list: /questions, id: /q, summary: /ask, status: /state, status_values: {open: [todo], resolved: [done]}}
  stops: {file: plan.json, list: /halts, reason: /why, resolved: /cleared}
`;

const PLAN_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  required: ["steps", "reasons", "checks", "questions", "halts"],
  additionalProperties: false,
  properties: {
    reasons: { type: "array", items: { type: "object", required: ["key", "text", "seen_in"] } },
    steps: { type: "array", items: { $ref: "#/$defs/step" } },
    checks: { type: "array" },
    questions: { type: "array" },
    halts: { type: "array" },
  },
  $defs: {
    step: {
      type: "object",
      required: ["step", "do", "because", "risk"],
      properties: { step: { type: "string", pattern: "^S[0-9]+$" }, risk: { type: "object", required: ["level"] } },
    },
  },
};
const EVIDENCE_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  required: ["items"],
  properties: { items: { type: "array", items: { type: "object", required: ["ref", "what"] } } },
};

const plan = () => ({
  reasons: [{ key: "R1", text: "The cron job runs twice after DST", seen_in: ["EV1"] }],
  steps: [
    {
      step: "S1",
      do: "Schedule in UTC",
      because: ["R1"],
      after: [],
      checked_by: ["C1"],
      where: "cron/jobs.yaml",
      risk: { level: "low" },
      undo: "revert",
    },
    {
      step: "S2",
      do: "Add a run lock",
      because: ["#FINDING:R1"],
      after: ["S1"],
      checked_by: ["C1"],
      where: "jobs/lock.py",
      risk: { level: "medium" },
    },
  ],
  checks: [{ id: "C1", expect: "One run per day across the DST change", how: "replay the 2024-10-27 schedule" }],
  questions: [{ q: "Q1", ask: "Do other jobs use local time?", state: "todo" }],
  halts: [{ why: "needs-ops-window", cleared: true }],
});

/** A suite (a copy of the example) with the custom format, and a handoff in it. */
function customSuite(): { suite: string; handoff: string } {
  const g = makeGateRun({ copySuite: true });
  writeFileSync(path.join(g.suite, "twinlock.yaml"), `${configText(g.suite)}${CONFIG}`);
  mkdirSync(path.join(g.suite, "handoff-schemas"));
  writeFileSync(path.join(g.suite, "handoff-schemas/plan.schema.json"), JSON.stringify(PLAN_SCHEMA));
  writeFileSync(path.join(g.suite, "handoff-schemas/evidence.schema.json"), JSON.stringify(EVIDENCE_SCHEMA));
  rmSync(g.handoff, { recursive: true });
  writeHandoff(g.handoff, plan());
  return { suite: g.suite, handoff: g.handoff };
}

const configText = (suite: string): string => readFileSync(path.join(suite, "twinlock.yaml"), "utf8");

function writeHandoff(dir: string, p: unknown): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "plan.json"), JSON.stringify(p));
  writeFileSync(path.join(dir, "evidence.json"), JSON.stringify({ items: [{ ref: "EV1", what: "two runs in the 2024-10-27 log" }] }));
  writeFileSync(path.join(dir, "notes.md"), "We fix #FINDING:R1 with +ACTION:S1 and +ACTION:S2.\n");
}

/** The suite's format, as readiness --suite builds it. */
const formatOf = (suite: string) => {
  const { config } = loadSuiteConfig(suite);
  return selectHandoffFormat(config.handoff, readFormatSchemas(suite, config.handoff));
};

describe("a custom handoff format: the team's schemas and a mapping in twinlock.yaml", () => {
  it("reads a ready handoff into the model: IDs, citations, target, risk, rollback, unknowns and stops from records", () => {
    const { suite, handoff } = customSuite();
    const r = checkReadiness(handoff, formatOf(suite));
    expect(r.problems).toEqual([]);
    expect(r.ready).toBe(true);
    expect(r.format).toBe("custom");
    expect(r.model.actions.map((a) => [a.id, a.target, a.risk, a.rollback])).toEqual([
      ["S1", "cron/jobs.yaml", "low", "revert"],
      ["S2", "jobs/lock.py", "medium", null],
    ]);
    expect(r.openUnknowns).toEqual([{ id: "Q1", question: "Do other jobs use local time?" }]);
    expect(r.model.stops).toEqual([{ reason: "needs-ops-window", resolved: true, file: "plan.json" }]);
  });

  it("names each problem of a broken handoff: its schema, a dangling citation, a cycle, a duplicate, an unmapped status, an unresolved stop", () => {
    const { suite, handoff } = customSuite();
    const p = plan();
    (p.steps[0] as Record<string, unknown>).after = ["S2"];
    (p.steps[1] as Record<string, unknown>).checked_by = ["C9"];
    p.reasons.push({ ...(p.reasons[0] as (typeof p.reasons)[number]) });
    p.questions[0] = { q: "Q1", ask: "?", state: "maybe" };
    p.halts[0] = { why: "needs-ops-window", cleared: false };
    writeHandoff(handoff, p);
    expect(checkReadiness(handoff, formatOf(suite)).problems).toEqual([
      { file: "plan.json", record: "Q1", message: 'status (/state) is "maybe"; twinlock.yaml maps only "todo", "done", "deferred"' },
      { file: "plan.json", record: "R1", message: "duplicate finding ID R1; IDs must be unique" },
      { file: "plan.json", record: "S2", message: "verifies cites =VERIFY:C9, which does not exist" },
      { file: "plan.json", record: "S1", message: "depends_on cycle: +ACTION:S1 → +ACTION:S2 → +ACTION:S1" },
      { file: "plan.json", message: "unresolved !STOP:needs-ops-window; resolve it (mark it resolved in plan.json) before freezing" },
    ]);
    const bad = plan();
    (bad.steps[0] as Record<string, unknown>).step = "step-one";
    writeHandoff(handoff, bad);
    expect(checkReadiness(handoff, formatOf(suite)).problems).toEqual([
      { file: "plan.json", record: "step-one", message: 'steps.0.step: must match pattern "^S[0-9]+$"' },
    ]);
  });

  it("is judged through readiness --suite", async () => {
    const { suite, handoff } = customSuite();
    const r = await runCli(["readiness", handoff, "--suite", suite]);
    expect(r.stdout).toContain(
      "ready: 1 evidence, 1 finding, 1 unknown (1 open), 2 actions, 1 criteria, 3 files; 0 problems (format custom)",
    );
    expect(r.code).toBe(0);
  });
});

describe("the custom format's config is strict, with clear errors", () => {
  const validate = async (handoffYaml: string) => {
    const { suite } = customSuite();
    const config = path.join(suite, "twinlock.yaml");
    writeFileSync(config, `${configText(suite).split("handoff:")[0]}${handoffYaml}`);
    return (await runCli(["validate", "--suite", suite])).stdout;
  };

  it("refuses a schema path that leaves the suite, names the key, and an unknown format", async () => {
    expect(await validate("handoff:\n  format: custom\n  schemas: {plan.json: ../outside.json}\n")).toMatch(
      /twinlock\.yaml:\d+:\d+ CONFIG_INVALID handoff\.schemas\.plan\.json: schema file: a relative path inside the folder/,
    );
    expect(await validate("handoff:\n  format: yaml\n")).toContain("handoff.format: format must be twinlock, mission-directives or custom");
  });

  it("refuses a record kind whose file has no schema", async () => {
    const out = await validate(CONFIG.replace("evidence: {file: evidence.json", "evidence: {file: other.json"));
    expect(out).toContain(
      "handoff.evidence.file: other.json has no schema: list it under handoff.schemas with the JSON Schema that checks it",
    );
  });
});

describe("the custom format's schemas are bound by the pin (the agent can edit the suite)", () => {
  it("pins the sha256 of each schema file and refuses the suite once one changed, naming both digests", async () => {
    const { suite } = customSuite();
    await pinForTest(suite, true);
    const home = testHome();
    const suiteId = configText(suite).match(/^suite_id: (.*)$/m)?.[1] as string;
    const run = { root: suite, suite_id: suiteId };
    const before = loadPinnedPolicy(home, run);
    expect(before.handoffFormat.name).toBe("custom");
    expect(Object.keys(before.pin.handoff_schemas ?? {})).toEqual([
      "handoff-schemas/evidence.schema.json",
      "handoff-schemas/plan.schema.json",
    ]);
    expect(before.policyDigest).not.toBe(before.pin.config_sha256);
    // The agent loosens the team's schema so its handoff passes.
    writeFileSync(path.join(suite, "handoff-schemas/plan.schema.json"), JSON.stringify({ type: "object" }));
    expect(() => loadPinnedPolicy(home, run)).toThrow(
      /^handoff schema handoff-schemas\/plan\.schema\.json of suite \S+ changed since it was pinned \(pinned sha256:[0-9a-f]{64}, now sha256:[0-9a-f]{64}\); re-pin after reviewing the change/,
    );
  });

  it("refuses to pin a schema that is a symbolic link, a FIFO, or missing", async () => {
    const { suite } = customSuite();
    const schema = path.join(suite, "handoff-schemas/plan.schema.json");
    const outside = path.join(makeRunTempDir(), "outside.schema.json");
    writeFileSync(outside, JSON.stringify(PLAN_SCHEMA));
    rmSync(schema);
    symlinkSync(outside, schema);
    const pin = () => pinSuite(testHome(), { suiteDir: suite, allowUnsigned: true, key: TEST_PINNER });
    await expect(pin()).rejects.toThrow(
      /^cannot pin \S+: handoff schema handoff-schemas\/plan\.schema\.json: handoff-schemas\/plan\.schema\.json is a symbolic link/,
    );
    rmSync(schema);
    await expect(pin()).rejects.toThrow(/handoff schema handoff-schemas\/plan\.schema\.json cannot be read \(ENOENT\)/);
    rmSync(path.join(suite, "handoff-schemas"), { recursive: true });
    symlinkSync(path.dirname(outside), path.join(suite, "handoff-schemas"));
    await expect(pin()).rejects.toThrow(/handoff-schemas is a symbolic link/);
  });

  it("refuses to pin a schema that $refs the network, and never fetches it", async () => {
    const { suite } = customSuite();
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    writeFileSync(path.join(suite, "handoff-schemas/plan.schema.json"), JSON.stringify({ $ref: "https://schemas.example.com/plan.json" }));
    await expect(pinSuite(testHome(), { suiteDir: suite, allowUnsigned: true, key: TEST_PINNER })).rejects.toThrow(
      /refers to https:\/\/schemas\.example\.com\/plan\.json, which is not one of the format's schemas; twinlock never fetches a schema/,
    );
    expect(fetchSpy).not.toHaveBeenCalled();
    fetchSpy.mockRestore();
  });
});

describe("a schema read two ways", () => {
  it("refuses to pin a schema with a key twice in one object (a reviewer may read the first, JSON.parse keeps the last)", async () => {
    const { suite } = customSuite();
    writeFileSync(
      path.join(suite, "handoff-schemas/plan.schema.json"),
      '{"type": "object", "additionalProperties": false, "properties": {}, "additionalProperties": true}',
    );
    await expect(pinSuite(testHome(), { suiteDir: suite, allowUnsigned: true, key: TEST_PINNER })).rejects.toThrow(
      'handoff schema handoff-schemas/plan.schema.json has the key "additionalProperties" twice in one object; keep one',
    );
  });
});

describe("compileJsonSchemas", () => {
  it("lets listed schemas $ref each other, and refuses anything else as a RefusalError", () => {
    const v = compileJsonSchemas([
      { name: "a.json", schema: { $ref: "b.json" } },
      { name: "b.json", schema: { type: "string" } },
    ]);
    expect(v.get("a.json")?.("x")).toEqual([]);
    expect(v.get("a.json")?.(1)).toEqual([{ path: "(top level)", message: "must be string" }]);
    expect(() => compileJsonSchemas([{ name: "c.json", schema: { $ref: "http://127.0.0.1:1/x.json" } }])).toThrow(RefusalError);
  });
});
