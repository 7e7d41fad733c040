import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { HandoffRecords } from "../handoff/handoff-records.js";

/**
 * A small, real handoff for MD-29 (debugging planner): a flaky checkout test
 * traced to a race in the cart-total cache. Revision 1 as first frozen;
 * `reviseDemoHandoff` applies the reviewer's requested changes (Windows
 * coverage and rollback evidence).
 */
export function demoHandoffRecords(): HandoffRecords {
  return {
    evidence: {
      evidence: [
        {
          id: "E1",
          source: "ci/flaky-report-2026-11.csv",
          observed: "checkout_total_test failed 37 of 1,000 CI runs, always on runners with 4+ cores",
          collected_at: "2026-11-28T09:12:00Z",
        },
        {
          id: "E2",
          source: "stress run: go test -race -count=500 ./cart/...",
          observed: "race detector reports concurrent write to cartCache.totals at cache.go:88 and read at cache.go:61",
          collected_at: "2026-11-28T10:40:00Z",
        },
      ],
    },
    findings: {
      findings: [
        {
          id: "F1",
          summary: "cartCache.totals is written without the mutex held when a price update races a checkout",
          evidence: ["@EVIDENCE:E2"],
          confidence: "high",
        },
        {
          id: "F2",
          summary: "the flake rate scales with core count, consistent with F1 and not with test ordering",
          evidence: ["E1", "E2"],
          confidence: "medium",
        },
      ],
      unknowns: [{ id: "U1", question: "Does the nightly batch repricer hit the same path?", status: "open", owner: "payments team" }],
    },
    actions: {
      actions: [
        {
          id: "A1",
          summary: "Add a regression test that reproduces the race deterministically with a barrier",
          target: "cart/cache_race_test.go",
          findings: ["#FINDING:F1"],
          risk: "low",
          rollback: "delete the test file",
          depends_on: [],
          verifies: ["=VERIFY:V1"],
        },
        {
          id: "A2",
          summary: "Hold cartCache.mu for the read-modify-write of totals in UpdatePrice",
          target: "cart/cache.go:80-95",
          findings: ["F1", "F2"],
          risk: "medium",
          rollback: "git revert of the single commit",
          depends_on: ["+ACTION:A1"],
          verifies: ["V1", "V2"],
        },
      ],
      stops: [],
    },
    criteria: {
      criteria: [
        {
          id: "V1",
          criterion: "the regression test fails before A2 and passes after it",
          method: "go test -run TestCartCacheRace -count=50 ./cart/",
        },
        { id: "V2", criterion: "no race reports in 500 stressed runs of the cart package", method: "go test -race -count=500 ./cart/..." },
      ],
    },
  };
}

/** Write the records as the four handoff files (and a short report) into `dir`. */
export function writeDemoHandoff(dir: string, records: HandoffRecords = demoHandoffRecords()): void {
  mkdirSync(dir, { recursive: true });
  const write = (name: string, value: unknown) => writeFileSync(path.join(dir, name), `${JSON.stringify(value, null, 2)}\n`);
  write("evidence_index.json", records.evidence);
  write("finding_register.json", records.findings);
  write("action_plan.json", records.actions);
  write("acceptance_criteria.json", records.criteria);
  writeFileSync(
    path.join(dir, "report.md"),
    "# Flaky checkout_total_test\n\nRoot cause: a data race on cartCache.totals (see #FINDING:F1).\n",
  );
}

/** The revision the reviewer asked for: Windows coverage (E3, V3) and rollback evidence (E4, A2's rollback). */
export function reviseDemoHandoff(records: HandoffRecords): HandoffRecords {
  const r = structuredClone(records);
  r.evidence.evidence.push(
    {
      id: "E3",
      source: "windows-2022 runner, 200 stressed runs",
      observed: "same race reported on Windows; flake rate 2.9%",
      collected_at: "2026-11-29T08:05:00Z",
    },
    {
      id: "E4",
      source: "staging rollback drill",
      observed: "reverting the fix commit restores the previous binary in 41 s with no data migration",
      collected_at: "2026-11-29T09:30:00Z",
    },
  );
  const f2 = r.findings.findings[1];
  if (f2) f2.evidence.push("@EVIDENCE:E3");
  const a2 = r.actions.actions[1];
  if (a2) {
    a2.rollback = "git revert of the single commit; drill E4 shows a 41 s rollback with no data migration";
    a2.verifies.push("=VERIFY:V3");
  }
  r.criteria.criteria.push({
    id: "V3",
    criterion: "the stress run is clean on the Windows runner too",
    method: "go test -race -count=200 ./cart/... on windows-2022",
  });
  return r;
}
