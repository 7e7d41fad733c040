import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../package-root.js";
import {
  databaseMigrationHandoff,
  dependencyUpgradeHandoff,
  type MdHandoff,
  securityIncidentHandoff,
  writeMdHandoff,
} from "../../test-support/mission-directives-handoff.js";
import { makeRunTempDir, removeGateRuns } from "../../test-support/run-fixture.js";
import { checkReadiness, type ReadinessReport } from "../check-readiness.js";
import { MISSION_DIRECTIVES_FORMAT } from "./mission-directives-format.js";

afterAll(removeGateRuns);

function readiness(h: MdHandoff, change: (h: MdHandoff) => void = () => {}): ReadinessReport {
  const copy = structuredClone(h);
  change(copy);
  const dir = makeRunTempDir("twinlock-md-");
  writeMdHandoff(dir, copy);
  return checkReadiness(dir, MISSION_DIRECTIVES_FORMAT);
}

const actionAt = (h: MdHandoff, i: number) => h.actions.actions[i] as Record<string, unknown>;

describe("a ready Mission Directives handoff", () => {
  it("reads a database migration: evidence, findings, actions, criteria, and the unknowns and stops of its report", () => {
    const r = readiness(databaseMigrationHandoff());
    expect(r.problems).toEqual([]);
    expect(r.ready).toBe(true);
    expect(r.format).toBe("mission-directives");
    expect(r.counts).toEqual({ evidence: 3, findings: 2, unknowns: 2, actions: 3, criteria: 3, files: 5 });
    expect(r.model.actions.map((a) => a.id)).toEqual(["ACTION-1", "ACTION-2", "ACTION-3"]);
    expect(r.openUnknowns).toEqual([
      { id: "UNKNOWN-1", question: "Does the nightly export read orders with a long transaction? owner: data team" },
    ]);
    expect(r.unresolvedStops).toEqual([]);
    const a3 = r.model.actions[2];
    expect(a3).toMatchObject({
      target: "migrations/0043_region_not_null.sql",
      risk: "level: high; blast_radius: one service",
      rollback: "steps: ALTER TABLE orders DROP CONSTRAINT region_not_null",
      dependsOn: ["+ACTION:ACTION-2"],
    });
  });

  it("reads a dependency upgrade", () => {
    const r = readiness(dependencyUpgradeHandoff());
    expect(r.problems).toEqual([]);
    expect(r.counts).toMatchObject({ evidence: 2, findings: 1, actions: 1, criteria: 1 });
  });

  it("reads a security incident fix, with an action that gives no rollback (the public schema makes it optional)", () => {
    const r = readiness(securityIncidentHandoff());
    expect(r.problems).toEqual([]);
    expect(r.model.actions.find((a) => a.id === "ACTION-ROTATE")?.rollback).toBeNull();
    expect(r.openUnknowns.map((u) => u.id)).toEqual(["UNKNOWN-SCOPE"]);
  });
});

describe("a broken Mission Directives handoff, each problem named exactly", () => {
  it("names a dangling finding_ids citation", () => {
    const r = readiness(databaseMigrationHandoff(), (h) => {
      actionAt(h, 1).finding_ids = ["FINDING-9"];
    });
    expect(r.ready).toBe(false);
    expect(r.problems).toEqual([
      { file: "action_plan.json", record: "ACTION-2", message: "finding_ids cites #FINDING:FINDING-9, which does not exist" },
    ]);
  });

  it("names dangling evidence_ids, verification_ids and dependencies", () => {
    const r = readiness(securityIncidentHandoff(), (h) => {
      (h.findings.findings[0] as Record<string, unknown>).evidence_ids = ["EVIDENCE-NONE"];
      actionAt(h, 0).verification_ids = ["VERIFY-NONE"];
      actionAt(h, 2).dependencies = ["ACTION-NONE"];
    });
    expect(r.problems).toEqual([
      {
        file: "finding_register.json",
        record: "FINDING-AUTHZ",
        message: "evidence_ids cites @EVIDENCE:EVIDENCE-NONE, which does not exist",
      },
      { file: "action_plan.json", record: "ACTION-ROTATE", message: "verification_ids cites =VERIFY:VERIFY-NONE, which does not exist" },
      { file: "action_plan.json", record: "ACTION-WAF", message: "dependencies cites +ACTION:ACTION-NONE, which does not exist" },
    ]);
  });

  it("names a dependency cycle", () => {
    const r = readiness(databaseMigrationHandoff(), (h) => {
      actionAt(h, 0).dependencies = ["ACTION-3"];
    });
    expect(r.problems).toEqual([
      {
        file: "action_plan.json",
        record: "ACTION-1",
        message: "dependencies cycle: +ACTION:ACTION-1 → +ACTION:ACTION-3 → +ACTION:ACTION-2 → +ACTION:ACTION-1",
      },
    ]);
  });

  it("names duplicate IDs of each kind", () => {
    const r = readiness(dependencyUpgradeHandoff(), (h) => {
      h.actions.actions.push({ ...actionAt(h, 0) });
      h.criteria.criteria.push({ ...(h.criteria.criteria[0] as Record<string, unknown>) });
    });
    expect(r.problems).toEqual([
      { file: "action_plan.json", record: "ACTION-PIN", message: "duplicate action ID ACTION-PIN; IDs must be unique" },
      { file: "acceptance_criteria.json", record: "VERIFY-TESTS", message: "duplicate criterion ID VERIFY-TESTS; IDs must be unique" },
    ]);
  });

  it("names a wrong ID prefix, as the public schema's pattern", () => {
    const r = readiness(dependencyUpgradeHandoff(), (h) => {
      actionAt(h, 0).action_id = "STEP-1";
    });
    expect(r.problems).toEqual([
      { file: "action_plan.json", record: "STEP-1", message: 'actions.0.action_id: must match pattern "^ACTION-"' },
    ]);
  });

  it("names a field the public schema does not allow, and a missing required one", () => {
    const r = readiness(dependencyUpgradeHandoff(), (h) => {
      (h.actions as Record<string, unknown>).notes = "see report";
      delete (h.findings.findings[0] as Record<string, unknown>).confidence;
    });
    expect(r.problems).toEqual([
      { file: "finding_register.json", record: "FINDING-RETRY", message: 'findings.0: missing required field "confidence"' },
      { file: "action_plan.json", message: '(top level): unknown field "notes"; the schema allows no other fields' },
    ]);
  });

  it("names a snapshot_id that differs between the record files", () => {
    const r = readiness(databaseMigrationHandoff(), (h) => {
      h.actions.snapshot_id = "SNAP-2025-04-30-orders";
    });
    expect(r.problems).toEqual([
      {
        file: "action_plan.json",
        message:
          'snapshot_id "SNAP-2025-04-30-orders" differs from evidence_index.json\'s "SNAP-2025-05-02-orders"; every record file of one handoff describes the same snapshot',
      },
    ]);
  });

  it("is not ready while a !STOP of its report is unresolved, and lists it", () => {
    const r = readiness(databaseMigrationHandoff(), (h) => {
      h.report = h.report.replace("!STOP:missing-backup (resolved) snapshot", "!STOP:missing-backup snapshot pending,");
    });
    expect(r.ready).toBe(false);
    expect(r.unresolvedStops).toEqual(["missing-backup"]);
    expect(r.problems).toEqual([
      {
        file: "report.md",
        message:
          "unresolved !STOP:missing-backup; resolve it (write !STOP:missing-backup (resolved) with notes in report.md) before freezing",
      },
    ]);
  });

  it("names a marker in the report that points at no record, and an unknown cited but never declared", () => {
    const r = readiness(dependencyUpgradeHandoff(), (h) => {
      h.report += "\nThen +ACTION:ACTION-9, once ?UNKNOWN:UNKNOWN-7 is answered.\n";
    });
    expect(r.problems).toEqual([
      { file: "report.md", message: "cites ?UNKNOWN:UNKNOWN-7, which does not exist in the records" },
      { file: "report.md", message: "cites +ACTION:ACTION-9, which does not exist in the records" },
    ]);
  });

  it("names a declaration with a status it does not know", () => {
    const r = readiness(securityIncidentHandoff(), (h) => {
      h.report += "- ?UNKNOWN:UNKNOWN-X (maybe) who knows\n";
    });
    expect(r.problems).toEqual([
      { file: "report.md", record: "UNKNOWN-X", message: "?UNKNOWN:UNKNOWN-X has status (maybe); write (open), (resolved) or (deferred)" },
    ]);
  });

  it("names a status word written in another case, and reports that stop once (not also as a stop the plan lacks)", () => {
    const r = readiness(databaseMigrationHandoff(), (h) => {
      h.report = h.report.replace("!STOP:missing-backup (resolved)", "!STOP:missing-backup (Resolved)");
    });
    expect(r.problems).toEqual([
      {
        file: "report.md",
        message:
          "!STOP:missing-backup has status (Resolved); write (resolved) once it is, or nothing while it stands; status words are lower case: (resolved)",
      },
    ]);
  });

  it("names each missing record file", () => {
    const dir = makeRunTempDir("twinlock-md-");
    writeMdHandoff(dir, dependencyUpgradeHandoff());
    const r = checkReadiness(dir, MISSION_DIRECTIVES_FORMAT);
    expect(r.ready).toBe(true);
    rmSync(`${dir}/acceptance_criteria.json`);
    expect(checkReadiness(dir, MISSION_DIRECTIVES_FORMAT).problems).toEqual([
      { file: "acceptance_criteria.json", message: "missing: a handoff needs acceptance_criteria.json" },
    ]);
  });

  it("does not read a twinlock-format handoff as ready", async () => {
    const { writeDemoHandoff } = await import("../../demo/demo-handoff.js");
    const dir = makeRunTempDir("twinlock-md-");
    writeDemoHandoff(dir);
    const r = checkReadiness(dir, MISSION_DIRECTIVES_FORMAT);
    expect(r.ready).toBe(false);
    expect(r.problems).toContainEqual({ file: "evidence_index.json", message: '(top level): missing required field "snapshot_id"' });
  });
});

describe("the example handoff the README points at", () => {
  it("is ready in the mission-directives format, so a team can start from it", () => {
    const r = checkReadiness(path.join(PACKAGE_ROOT, "examples", "handoff-mission-directives"), MISSION_DIRECTIVES_FORMAT);
    expect(r.problems).toEqual([]);
    expect(r.ready).toBe(true);
  });
});
