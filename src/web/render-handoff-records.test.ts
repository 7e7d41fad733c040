import { describe, expect, it } from "vitest";
import { demoHandoffRecords } from "../demo/demo-handoff.js";
import { presentRecords } from "../gate/present-records.js";
import { twinlockModelOf } from "../test-support/model-of.js";
import { renderHandoffRecords } from "./render-handoff-records.js";

describe("renderHandoffRecords", () => {
  it("counts every record of a kind shown in part, and says which record is shown with values cut", () => {
    const m = twinlockModelOf(demoHandoffRecords());
    const a1 = { ...(m.actions[0] as (typeof m.actions)[number]), rollback: "r".repeat(60_000) };
    const evidence = Array.from({ length: 2000 }, (_, i) => ({
      id: `X${i}`,
      file: "evidence_index.json",
      summary: `seen ${i}`,
      source: {},
    }));
    const p = presentRecords({ ...m, evidence, actions: [a1, ...m.actions.slice(1)] }, []);
    const html = renderHandoffRecords(p.model, { totals: p.totals, cut: p.notShown?.cut ?? [] });
    expect(html).toContain(`Evidence (2000; the first ${p.model.evidence.length} shown)`);
    expect(html).toContain(`Actions (${m.actions.length})`);
    expect(html).toMatch(/<code>\+ACTION:A1<\/code> [^<]*<strong class="record-cut">\(not shown whole: long values cut\)<\/strong><\/h3>/);
    expect(html).toContain("… [57952 more characters not shown]");
  });

  it("shows a model whole as it is, with no count of records not shown", () => {
    const html = renderHandoffRecords(twinlockModelOf(demoHandoffRecords()));
    expect(html).not.toContain("shown)");
    expect(html).not.toContain("not shown whole");
  });
});
