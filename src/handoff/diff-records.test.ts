import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { demoHandoffRecords, reviseDemoHandoff } from "../demo/demo-handoff.js";
import { demoModel, manyEvidence, twinlockModelOf } from "../test-support/model-of.js";
import { boundRecordChanges, diffRecords, RECORD_DIFF_BUDGET } from "./diff-records.js";

describe("diffRecords", () => {
  it("names every record added or changed between the demo's two revisions, by marker", () => {
    const before = demoHandoffRecords();
    const changes = diffRecords(twinlockModelOf(before), twinlockModelOf(reviseDemoHandoff(before)));
    expect(changes.map((c) => `${c.change} ${c.marker}`)).toEqual([
      "added @EVIDENCE:E3",
      "added @EVIDENCE:E4",
      "changed #FINDING:F2",
      "changed +ACTION:A2",
      "added =VERIFY:V3",
    ]);
  });

  it("shows a changed record's old and new value for each field that differs, and only those", () => {
    const before = demoHandoffRecords();
    const a2 = diffRecords(twinlockModelOf(before), twinlockModelOf(reviseDemoHandoff(before))).find((c) => c.marker === "+ACTION:A2");
    expect(a2?.fields?.map((f) => f.field)).toEqual(["rollback", "verifies"]);
    expect(a2?.fields?.[0]).toMatchObject({ before: "git revert of the single commit" });
  });

  it("reports a removed record and a file of the handoff that changed", () => {
    const before = demoHandoffRecords();
    const after = structuredClone(before);
    after.criteria.criteria.pop();
    const file = (sha: string) => [{ path: "report.md", size: 1, sha256: sha.repeat(64) }];
    const changes = diffRecords(twinlockModelOf(before), twinlockModelOf(after), file("a"), file("b"));
    expect(changes.map((c) => `${c.change} ${c.marker}`)).toEqual(["removed =VERIFY:V2", "changed file report.md"]);
  });

  it("says a record file changed whenever its bytes changed (a Mission Directives file's environment), never 'nothing changed'", () => {
    const before = demoHandoffRecords();
    const files = (sha: string) => [{ path: "action_plan.json", size: 1, sha256: sha.repeat(64) }];
    const changes = diffRecords(twinlockModelOf(before), twinlockModelOf(structuredClone(before)), files("a"), files("b"));
    expect(changes).toEqual([{ change: "changed", marker: "file action_plan.json", summary: "outside its records" }]);
    // A file whose records changed is named too: a change outside them must not hide behind theirs.
    const after = structuredClone(before);
    (after.actions.actions[0] as { summary: string }).summary = "another summary";
    expect(diffRecords(twinlockModelOf(before), twinlockModelOf(after), files("a"), files("b"))).toEqual([
      expect.objectContaining({ change: "changed", marker: "+ACTION:A1" }),
      {
        change: "changed",
        marker: "file action_plan.json",
        summary: "its records named above, and anything else in it (its diff shows every line)",
      },
    ]);
  });
});

describe("boundRecordChanges", () => {
  it("shows the first 200 of 100,000 added records and counts them all, in a bounded size", () => {
    const m = demoModel();
    const many = manyEvidence(100_000);
    const bounded = boundRecordChanges(diffRecords(m, { ...m, evidence: [...m.evidence, ...many] }));
    expect(bounded.total).toBe(100_000);
    expect(bounded.changes).toHaveLength(RECORD_DIFF_BUDGET.changes);
    expect(bounded.changes[0]).toEqual({ change: "added", marker: "@EVIDENCE:X0", summary: "seen 0" });
    expect(bounded.cut).toEqual([]);
  });

  it("cuts a changed field's 60,000-character value to its head, and names the change as cut", () => {
    const before = demoHandoffRecords();
    const after = structuredClone(before);
    (after.actions.actions[0] as { rollback: string }).rollback = "z".repeat(60_000);
    const bounded = boundRecordChanges(diffRecords(twinlockModelOf(before), twinlockModelOf(after)));
    expect(bounded.cut).toEqual(["+ACTION:A1"]);
    const after1 = bounded.changes[0]?.fields?.find((f) => f.field === "rollback")?.after as string;
    expect(after1).toMatch(/^z+… \[\d+ more characters not shown\]$/);
    expect(JSON.stringify(bounded).length).toBeLessThan(RECORD_DIFF_BUDGET.changeChars * 2);
  });

  it("keeps any changes within the budget: the first of them, in order, each whole unless named as cut", () => {
    const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 3000 }));
    const change = fc.record({
      change: fc.constantFrom("added" as const, "removed" as const, "changed" as const),
      marker: fc.string({ maxLength: 20 }),
      summary: fc.string({ maxLength: 2000 }),
      fields: fc.option(fc.array(fc.record({ field: fc.string({ maxLength: 8 }), before: value, after: value }), { maxLength: 80 }), {
        nil: undefined,
      }),
    });
    const budget = fc.record({
      changes: fc.integer({ min: 0, max: 30 }),
      chars: fc.integer({ min: 0, max: 20_000 }),
      changeChars: fc.integer({ min: 50, max: 2000 }),
      stringChars: fc.integer({ min: 0, max: 500 }),
      items: fc.integer({ min: 0, max: 10 }),
      depth: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(fc.array(change, { maxLength: 60 }), budget, (changes, b) => {
        const clean = changes.map(({ fields, ...c }) => (fields === undefined ? c : { ...c, fields }));
        const bounded = boundRecordChanges(clean, b);
        expect(bounded.total).toBe(clean.length);
        expect(bounded.changes.length).toBeLessThanOrEqual(Math.min(b.changes, clean.length));
        expect(JSON.stringify(bounded.changes).length).toBeLessThanOrEqual(6 * b.chars + 2 + 60 * bounded.changes.length);
        const cut = new Set(bounded.cut);
        bounded.changes.forEach((c, i) => {
          if (!cut.has(c.marker)) expect(c).toEqual(clean[i]);
        });
      }),
      { numRuns: 60 },
    );
  });
});
