/**
 * Admission checks are one registry (ADMISSION_CHECKS, src/run/admission/)
 * read by both consumers: admission (`runAdmissionChecks`) and CI's
 * re-judging (`rejudgeAdmissions`). Each row says what CI does with it (a
 * `rejudge` from the run alone, or why it cannot be judged offline), and a
 * row added to the registry is heard by both consumers without touching
 * either; docs/reference.md lists exactly the registry's checks (and the
 * trust checks T1–T5).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ADMISSION_CHECKS } from "./run/admission/admission-check-registry.js";
import type { AdmissionCheckModule } from "./run/admission/admission-facts.js";
import { type AdmissionFacts, runAdmissionChecks } from "./run/admission-checks.js";
import type { RunState } from "./run/run-schema.js";

/** Facts with no workflow: every check fails, none throws. */
function noWorkflowFacts(): AdmissionFacts {
  const state = { run_id: "run_0000000000000000", workflows: {}, stops: [] } as unknown as RunState;
  return {
    state,
    workflow: undefined,
    requestedExecutor: "MD-30",
    suiteTwin: { plannerOfRequested: null, twinOfPlanner: null, verdict: null, pairDigest: null },
    rehash: { error: "no folder" },
    planActionIds: [],
    requested: {},
    chain: { ok: true },
    pin: { ok: false, detail: "not pinned" },
    frozenBytes: [],
    consumedInHome: undefined,
    policyDigestNow: null,
    executorDigestNow: null,
    untrustedStopLifts: [],
    dryRunRequired: false,
    distrustDryRunResult: () => undefined,
    purpose: "admit",
    now: new Date(0),
  };
}

const rows = ADMISSION_CHECKS as AdmissionCheckModule[];
const toy: AdmissionCheckModule = {
  id: "toy",
  name: "a toy check",
  reads: [],
  judge: () => ({ ok: false, detail: "the toy refuses" }),
  rejudge: () => ["the toy re-judged it"],
};
afterEach(() => {
  const i = rows.indexOf(toy);
  if (i >= 0) rows.splice(i, 1);
});

describe("admission-check consumers", () => {
  it("gives every check a unique id, a name, and CI's handling: a re-judgement or why it cannot be judged from the run", () => {
    expect(new Set(rows.map((c) => c.id)).size).toBe(rows.length);
    for (const c of rows) {
      expect(c.name.length, c.id).toBeGreaterThan(0);
      if (typeof c.rejudge !== "function") expect(c.rejudge.offline.length, c.id).toBeGreaterThan(20);
    }
  });

  it("has admission report every row of the registry, in its order, and nothing else", () => {
    expect(runAdmissionChecks(noWorkflowFacts()).checks.map((c) => c.id)).toEqual(rows.map((c) => c.id));
  });

  it("has a row added to the registry heard by admission without touching it (CI's re-judging: src/ci/rejudge-admissions.test.ts)", () => {
    rows.push(toy);
    const checks = runAdmissionChecks(noWorkflowFacts()).checks;
    expect(checks.at(-1)).toEqual({ id: "toy", name: "a toy check", ok: false, detail: "the toy refuses" });
  });

  it("lists in docs/reference.md exactly the registry's checks and the trust checks", () => {
    const doc = readFileSync(path.join(import.meta.dirname, "..", "docs", "reference.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Admission checks"), doc.indexOf("\n## ", doc.indexOf("## Admission checks") + 5));
    const listed = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    expect(listed).toEqual([...rows.map((c) => c.id), "T1", "T2", "T3", "T4", "T5"]);
  });
});
