import { describe, expect, it } from "vitest";
import { demoHandoffRecords, reviseDemoHandoff } from "../demo/demo-handoff.js";
import { twinlockModelOf } from "../test-support/model-of.js";
import { diffRecords } from "./diff-records.js";

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
