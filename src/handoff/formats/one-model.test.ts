import { writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { writeDemoHandoff } from "../../demo/demo-handoff.js";
import { writeMdHandoff } from "../../test-support/mission-directives-handoff.js";
import { makeRunTempDir, removeGateRuns } from "../../test-support/run-fixture.js";
import { checkReadiness } from "../check-readiness.js";
import type { HandoffModel } from "../handoff-model.js";
import type { HandoffRecords } from "../handoff-records.js";
import { MISSION_DIRECTIVES_FORMAT } from "./mission-directives-format.js";

afterAll(removeGateRuns);

/** A random plan: evidence, findings citing evidence, actions citing findings, criteria and earlier actions (a DAG). */
const planArb = fc
  .record({
    evidence: fc.integer({ min: 1, max: 4 }),
    findings: fc.integer({ min: 1, max: 4 }),
    actions: fc.integer({ min: 1, max: 5 }),
    criteria: fc.integer({ min: 1, max: 3 }),
  })
  .chain((n) =>
    fc.record({
      n: fc.constant(n),
      cites: fc.array(fc.subarray([...Array(n.evidence).keys()], { minLength: 1 }), { minLength: n.findings, maxLength: n.findings }),
      addresses: fc.array(fc.subarray([...Array(n.findings).keys()], { minLength: 1 }), { minLength: n.actions, maxLength: n.actions }),
      verifies: fc.array(fc.subarray([...Array(n.criteria).keys()], { minLength: 1 }), { minLength: n.actions, maxLength: n.actions }),
      after: fc.array(fc.array(fc.nat(), { maxLength: 3 }), { minLength: n.actions, maxLength: n.actions }),
      marker: fc.boolean(),
    }),
  );
type Plan = typeof planArb extends fc.Arbitrary<infer T> ? T : never;

const E = (i: number) => `EVIDENCE-${i}`;
const F = (i: number) => `FINDING-${i}`;
const A = (i: number) => `ACTION-${i}`;
const V = (i: number) => `VERIFY-${i}`;
/** Dependencies only on earlier actions, so the plan is acyclic. */
const deps = (p: Plan, i: number) => (i === 0 ? [] : [...new Set((p.after[i] ?? []).map((d) => A(d % i)))]);

function asTwinlock(p: Plan): HandoffRecords {
  return {
    evidence: { evidence: [...Array(p.n.evidence).keys()].map((i) => ({ id: E(i), source: `log ${i}`, observed: "seen" })) },
    findings: {
      findings: p.cites.map((c, i) => ({
        id: F(i),
        summary: `finding ${i}`,
        evidence: c.map((e) => (p.marker ? `@EVIDENCE:${E(e)}` : E(e))),
      })),
      unknowns: [],
    },
    actions: {
      actions: p.addresses.map((f, i) => ({
        id: A(i),
        summary: `action ${i}`,
        target: "svc",
        findings: f.map(F),
        risk: "low" as const,
        rollback: "revert",
        depends_on: deps(p, i),
        verifies: (p.verifies[i] ?? []).map(V),
      })),
      stops: [],
    },
    criteria: { criteria: [...Array(p.n.criteria).keys()].map((i) => ({ id: V(i), criterion: `criterion ${i}`, method: "test" })) },
  };
}

function asMissionDirectives(r: HandoffRecords) {
  const snap = "SNAP-1";
  return {
    evidence: {
      snapshot_id: snap,
      captured_at: "2025-01-01T00:00:00Z",
      project_revision: "abc",
      environment: {},
      sources: r.evidence.evidence.map((e) => ({
        evidence_id: e.id,
        kind: "log",
        location: e.source,
        trust: "trusted",
        captured_at: "2025-01-01T00:00:00Z",
      })),
    },
    findings: {
      snapshot_id: snap,
      findings: r.findings.findings.map((f) => ({
        finding_id: f.id,
        title: f.summary,
        status: "validated",
        severity: "low",
        confidence: "high",
        evidence_ids: f.evidence,
      })),
    },
    actions: {
      snapshot_id: snap,
      actions: r.actions.actions.map((a) => ({
        action_id: a.id,
        finding_ids: a.findings,
        description: a.summary,
        dependencies: a.depends_on,
        change_surface: [a.target],
        risk: { level: a.risk },
        rollback: { steps: a.rollback },
        verification_ids: a.verifies,
      })),
    },
    criteria: {
      criteria: r.criteria.criteria.map((c) => ({ verification_id: c.id, statement: c.criterion, method: c.method, required: true })),
    },
    report: "# Plan\n",
  };
}

/** What the checks read of a model: IDs and citations, by kind. */
const shape = (m: HandoffModel) => ({
  evidence: m.evidence.map((e) => e.id),
  findings: m.findings.map((f) => [f.id, f.evidence]),
  actions: m.actions.map((a) => [a.id, a.findings, a.dependsOn, a.verifies]),
  criteria: m.criteria.map((c) => c.id),
});

describe("one model, whatever the format", () => {
  it("reads the same plan written as twinlock records and as Mission Directives records into the same IDs and citations, both ready", () => {
    fc.assert(
      fc.property(planArb, (p) => {
        const records = asTwinlock(p);
        const a = makeRunTempDir("twinlock-one-");
        writeDemoHandoff(a, records);
        writeFileSync(path.join(a, "report.md"), "# Plan\n");
        const b = makeRunTempDir("twinlock-one-");
        writeMdHandoff(b, asMissionDirectives(records));
        const twinlock = checkReadiness(a);
        const md = checkReadiness(b, MISSION_DIRECTIVES_FORMAT);
        expect(twinlock.problems).toEqual([]);
        expect(md.problems).toEqual([]);
        expect(shape(md.model)).toEqual(shape(twinlock.model));
        removeGateRuns();
      }),
      { numRuns: 25 },
    );
  });
});
