import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HandoffModel, RecordKind } from "../handoff/handoff-model.js";
import { demoModel, manyEvidence } from "../test-support/model-of.js";
import { describeRecordsNotShown, presentRecords, RECORD_KINDS, RECORD_SHOW_BUDGET, type RecordShowBudget } from "./present-records.js";

const HASH = `sha256:${"a".repeat(64)}`;
const FILES = [{ path: "evidence_index.json", size: 123, sha256: "b".repeat(64) }];

/** Text of any length: mostly short, sometimes far over a string's share, with characters JSON escapes and pairs it must not split. */
const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom("a", "\u0000", "😀", '"'), fc.integer({ min: 0, max: 3000 })).map(([c, n]) => c.repeat(n)),
  },
);
const ids = (n: number) => fc.uniqueArray(fc.stringMatching(/^[A-Z][0-9]{1,4}$/), { maxLength: n });
const base = (id: string) => ({ id, file: "records.json" });
const source = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), text, { maxKeys: 6 }));

/** Any model: each kind a list of records with any text, citations, facts and source as written. */
const model: fc.Arbitrary<HandoffModel> = fc
  .record({
    evidence: ids(60).chain((xs) => fc.tuple(...xs.map((id) => fc.record({ summary: text, source }).map((r) => ({ ...base(id), ...r }))))),
    findings: ids(30).chain((xs) =>
      fc.tuple(
        ...xs.map((id) =>
          fc
            .record({
              summary: text,
              evidence: fc.array(text, { maxLength: 150 }),
              facts: fc.array(fc.tuple(text, text), { maxLength: 4 }),
              source,
            })
            .map((r) => ({ ...base(id), ...r })),
        ),
      ),
    ),
    actions: ids(30).chain((xs) =>
      fc.tuple(
        ...xs.map((id) =>
          fc
            .record({
              summary: text,
              target: fc.option(text),
              risk: fc.option(text),
              rollback: fc.option(text),
              findings: fc.array(text, { maxLength: 5 }),
              dependsOn: fc.array(text, { maxLength: 3 }),
              verifies: fc.array(text, { maxLength: 3 }),
              source,
            })
            .map((r) => ({ ...base(id), ...r })),
        ),
      ),
    ),
    stops: fc.array(fc.record({ reason: text, resolved: fc.boolean(), file: fc.constant("report.md") }), { maxLength: 5 }),
  })
  .map((r) => ({
    format: "twinlock" as const,
    evidence: r.evidence,
    findings: r.findings,
    unknowns: [],
    actions: r.actions,
    criteria: [],
    stops: r.stops,
    recordFiles: ["evidence_index.json"],
    loaded: { evidence: true, findings: true, unknowns: true, actions: true, criteria: true, stops: true },
  }));

/** Budgets from tiny (everything cut) to the real one. */
const budget: fc.Arbitrary<RecordShowBudget> = fc.oneof(
  fc.constant({ ...RECORD_SHOW_BUDGET }),
  fc.record({
    records: fc.integer({ min: 1, max: 40 }),
    kindChars: fc.integer({ min: 600, max: 20_000 }),
    recordChars: fc.integer({ min: 100, max: 500 }),
    stringChars: fc.integer({ min: 0, max: 300 }),
    items: fc.integer({ min: 0, max: 20 }),
    depth: fc.integer({ min: 0, max: 4 }),
  }),
);

const CUT = /… \[(\d+) more characters not shown\]$/;

/** A value as shown is the value, or (when cut) a string that is its head and a mark, a list or object of its first items so shown. */
function isShownPartOf(shown: unknown, value: unknown): boolean {
  if (typeof shown === "string") {
    if (shown === value) return true;
    if (typeof value !== "string") return /^… \[(a list|an object) not shown\]$/.test(shown);
    const m = CUT.exec(shown);
    return m !== null && value.startsWith(shown.slice(0, m.index)) && value.length - m.index === Number(m[1]);
  }
  if (Array.isArray(shown))
    return Array.isArray(value) && shown.length <= value.length && shown.every((x, i) => isShownPartOf(x, value[i]));
  if (shown !== null && typeof shown === "object") {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
    return Object.entries(shown).every(([k, v]) => Object.entries(value).some(([k2, v2]) => isShownPartOf(k, k2) && isShownPartOf(v, v2)));
  }
  return Object.is(shown, value);
}

describe("presentRecords", () => {
  it("shows any records within the budget, each kind's first in order, each whole unless named as cut and then a part of it", () => {
    fc.assert(
      fc.property(model, budget, (m, b) => {
        const p = presentRecords(m, FILES, b);
        const cut = new Set(p.notShown?.cut ?? []);
        for (const [kind, marker] of RECORD_KINDS) {
          const all = m[kind] as unknown as Array<Record<string, unknown>>;
          const shown = p.model[kind] as unknown as Array<Record<string, unknown>>;
          expect(p.totals[kind]).toBe(all.length);
          expect(shown.length).toBeLessThanOrEqual(Math.min(b.records, all.length));
          // Within the budget whatever the records: JSON is at most six times what the budget counts.
          expect(JSON.stringify(shown).length).toBeLessThanOrEqual(6 * b.kindChars + 2);
          shown.forEach((r, i) => {
            const name = `${marker}${kind === "stops" ? String(r.reason) : String(r.id)}`;
            if (cut.has(name)) expect(isShownPartOf(r, all[i])).toBe(true);
            else expect(r).toEqual(all[i]);
          });
          const said = p.notShown?.kinds.find((k) => k.kind === kind);
          if (shown.length < all.length) expect(said).toEqual({ kind, shown: shown.length, total: all.length });
          else expect(said).toBeUndefined();
        }
        const whole = RECORD_KINDS.every(([k]) => p.model[k].length === m[k].length) && cut.size === 0;
        expect(p.notShown === null).toBe(whole);
        expect(describeRecordsNotShown(p, HASH) === null).toBe(whole);
      }),
      { numRuns: 60 },
    );
  });

  it("shows the demo's records whole, with nothing said to be left out", () => {
    const m = demoModel();
    const p = presentRecords(m, FILES);
    expect(p.model).toEqual(m);
    expect(p.notShown).toBeNull();
    expect(describeRecordsNotShown(p, HASH)).toBeNull();
  });

  it("shows 100,000 evidence records by their first, saying how many of all, the decision's hash and the record file's sha256", () => {
    const m = demoModel();
    const many = manyEvidence(100_000);
    const p = presentRecords({ ...m, evidence: many }, FILES);
    const kinds = p.notShown?.kinds as Array<{ kind: RecordKind; shown: number; total: number }>;
    expect(kinds).toEqual([{ kind: "evidence", shown: RECORD_SHOW_BUDGET.records, total: 100_000 }]);
    const notice = describeRecordsNotShown(p, HASH);
    expect(notice).toContain(`evidence: the first ${RECORD_SHOW_BUDGET.records} of 100,000`);
    expect(notice).toContain(`hash ${HASH}`);
    expect(notice).toContain(`sha256 ${"b".repeat(64)}, at blobs/bb/${"b".repeat(64)}`);
  });

  it("cuts a record's one 5 MB string to its head and names the record as cut", () => {
    const m = demoModel();
    const long = "y".repeat(5_000_000);
    const a1 = { ...(m.actions[0] as HandoffModel["actions"][number]), rollback: long, source: { rollback: long } };
    const p = presentRecords({ ...m, actions: [a1, ...m.actions.slice(1)] }, FILES);
    expect(p.notShown?.cut).toEqual([`+ACTION:${a1.id}`]);
    expect(p.model.actions[0]?.rollback).toMatch(/^y+… \[4997952 more characters not shown\]$/);
    expect(JSON.stringify(p.model.actions[0]).length).toBeLessThan(RECORD_SHOW_BUDGET.recordChars + 200);
  });
});
