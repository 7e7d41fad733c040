import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { runReview } from "../cli/commands/review.js";
import { emptyModel, type HandoffModel } from "../handoff/handoff-model.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { readRun } from "../home/run-ledger.js";
import { freeze, frozenHash, homeOf, makeGateRun, PLANNER, removeGateRuns, startRun, storeOf } from "../test-support/run-fixture.js";
import { ALICE_KEY } from "../test-support/signed-run.js";
import { verifyReceiptSignature } from "../trust/sign-receipt.js";
import { presentPlan } from "./present-plan.js";
import {
  checkReviewComments,
  commentItemChanges,
  countLines,
  MAX_COMMENT_BYTES,
  MAX_COMMENTS,
  parseCommentOption,
  type ReviewComment,
} from "./review-comments.js";
import { reviewPairPlan } from "./review-pair-plan.js";

afterAll(() => removeGateRuns());

const sha = (c: string) => c.repeat(64);

/** A model with one record of each commentable kind, and a notes file of three lines. */
function smallModel(): HandoffModel {
  const m = emptyModel("twinlock");
  m.evidence = [{ id: "E1", file: "evidence_index.json", source: { id: "E1" }, summary: "seen" }];
  m.findings = [{ id: "F1", file: "finding_register.json", source: { id: "F1" }, summary: "found", evidence: ["E1"], facts: [] }];
  m.actions = [
    {
      id: "A1",
      file: "action_plan.json",
      source: { id: "A1" },
      summary: "do",
      target: "t",
      risk: "low",
      rollback: "r",
      findings: ["F1"],
      dependsOn: [],
      verifies: ["C1"],
    },
  ];
  m.criteria = [{ id: "C1", file: "acceptance_criteria.json", source: { id: "C1" }, statement: "ok", method: null }];
  return m;
}
const files: ManifestEntry[] = [{ path: "notes.md", size: 12, sha256: sha("a") }];
const threeLines = () => 3;

describe("checkReviewComments: comments on the frozen revision's items", () => {
  it("names each comment's kind: evidence, finding, action, criterion or a file line", () => {
    const drafts = ["E1", "F1", "A1", "C1", "notes.md:3"].map((item) => ({ item, text: `on ${item}` }));
    expect(checkReviewComments(drafts, smallModel(), files, threeLines).map((c) => c.kind)).toEqual([
      "evidence",
      "finding",
      "action",
      "criterion",
      "file",
    ]);
  });

  it("refuses a comment on an ID the revision does not hold, in one line naming it", () => {
    expect(() => checkReviewComments([{ item: "A9", text: "x" }], smallModel(), files, threeLines)).toThrow(
      /^refused: "A9" is not an evidence item, finding, action or criterion of this revision/,
    );
    // An unknown is not a commentable kind, and a stop has no ID.
    expect(() => checkReviewComments([{ item: "U1", text: "x" }], { ...smallModel(), unknowns: [] }, files, threeLines)).toThrow(/"U1"/);
  });

  it("refuses a file line past the file's end, a line 0 and a file the revision does not hold", () => {
    expect(() => checkReviewComments([{ item: "notes.md:4", text: "x" }], smallModel(), files, threeLines)).toThrow(
      /names line 4, but notes.md has 3 lines/,
    );
    expect(() => checkReviewComments([{ item: "notes.md:0", text: "x" }], smallModel(), files, threeLines)).toThrow(/not an evidence item/);
    expect(() => checkReviewComments([{ item: "other.md:1", text: "x" }], smallModel(), files, threeLines)).toThrow(/not an evidence item/);
  });

  it(`refuses more than ${MAX_COMMENTS} comments before looking any item up`, () => {
    const drafts = Array.from({ length: MAX_COMMENTS + 1 }, () => ({ item: "A1", text: "x" }));
    let looked = 0;
    expect(() =>
      checkReviewComments(drafts, smallModel(), files, () => {
        looked++;
        return 3;
      }),
    ).toThrow(`51 comments is over the limit of ${MAX_COMMENTS}`);
    expect(looked).toBe(0);
    expect(checkReviewComments(drafts.slice(1), smallModel(), files, threeLines)).toHaveLength(MAX_COMMENTS);
  });

  it(`refuses a comment over ${MAX_COMMENT_BYTES} bytes of UTF-8, and an empty one`, () => {
    const at = (text: string) => () => checkReviewComments([{ item: "A1", text }], smallModel(), files, threeLines);
    expect(at("é".repeat(MAX_COMMENT_BYTES / 2))).not.toThrow();
    expect(at(`${"é".repeat(MAX_COMMENT_BYTES / 2)}x`)).toThrow(
      `is ${MAX_COMMENT_BYTES + 1} bytes, over the limit of ${MAX_COMMENT_BYTES}`,
    );
    expect(at("  \n")).toThrow(/is empty/);
  });

  it("reads ITEM=TEXT with the item before the first '=' and refuses a value without one", () => {
    expect(parseCommentOption("A1=x = y")).toEqual({ item: "A1", text: "x = y" });
    expect(() => parseCommentOption("A1")).toThrow(/is not ITEM=TEXT/);
    expect(() => parseCommentOption("=x")).toThrow(/is not ITEM=TEXT/);
  });

  it("counts lines as an editor numbers them", () => {
    const n = (s: string) => countLines(Buffer.from(s));
    expect([n(""), n("a"), n("a\n"), n("a\nb"), n("a\n\n")]).toEqual([0, 1, 1, 2, 2]);
  });
});

describe("commentItemChanges: whether each commented item changed in the next revision", () => {
  it("says changed exactly for the records whose content changed, removed for those gone (property)", () => {
    const ids = ["E1", "E2", "F1", "A1", "A2", "C1"];
    const kindOf = (id: string) =>
      (({ E: "evidence", F: "finding", A: "action", C: "criterion" }) as const)[id[0] as "E" | "F" | "A" | "C"];
    const modelOf = (versions: ReadonlyMap<string, number>) => {
      const m = emptyModel("twinlock");
      for (const [id, v] of versions) {
        const r = { id, file: "x.json", source: { id, v } };
        const k = kindOf(id);
        if (k === "evidence") m.evidence.push({ ...r, summary: "" });
        else if (k === "finding") m.findings.push({ ...r, summary: "", evidence: [], facts: [] });
        else if (k === "action")
          m.actions.push({ ...r, summary: "", target: null, risk: null, rollback: null, findings: [], dependsOn: [], verifies: [] });
        else m.criteria.push({ ...r, statement: "", method: null });
      }
      return m;
    };
    fc.assert(
      fc.property(
        fc.subarray(ids, { minLength: 1 }),
        fc.array(fc.constantFrom("same", "changed", "removed"), { minLength: ids.length, maxLength: ids.length }),
        (commented, fate) => {
          const before = new Map(ids.map((id) => [id, 0]));
          const after = new Map<string, number>();
          ids.forEach((id, i) => {
            if (fate[i] === "same") after.set(id, 0);
            else if (fate[i] === "changed") after.set(id, 1);
          });
          const comments: ReviewComment[] = commented.map((id) => ({ item: id, kind: kindOf(id), text: "?" }));
          const got = commentItemChanges(comments, { model: modelOf(before), files: [] }, { model: modelOf(after), files: [] });
          const want = commented.map(
            (id) => ({ same: "unchanged", changed: "changed", removed: "removed" })[fate[ids.indexOf(id)] as string],
          );
          expect(got).toEqual(want);
        },
      ),
    );
  });

  it("judges a file line by its file's bytes", () => {
    const c = (item: string): ReviewComment => ({ item, kind: "file", text: "?" });
    const before = {
      model: emptyModel("twinlock"),
      files: [
        { path: "a.md", size: 1, sha256: sha("a") },
        { path: "b.md", size: 1, sha256: sha("b") },
      ],
    };
    const after = {
      model: emptyModel("twinlock"),
      files: [
        { path: "a.md", size: 1, sha256: sha("a") },
        { path: "c.md", size: 1, sha256: sha("c") },
      ],
    };
    after.files.push({ path: "b:x.md", size: 1, sha256: sha("d") });
    expect(commentItemChanges([c("a.md:1"), c("b.md:2"), c("b:x.md:1")], before, after)).toEqual(["unchanged", "removed", "changed"]);
  });
});

describe("reviewPairPlan with comments", () => {
  it("records them inside the one signed receipt: tampering one comment breaks its signature", async () => {
    const g = makeGateRun();
    await startRun(g);
    await freeze(g);
    const store = storeOf(g);
    const { receipt } = await reviewPairPlan({
      run: g.runFile,
      store,
      planner: PLANNER,
      decision: "changes_requested",
      comments: [
        { item: "A2", text: "Who runs the rollback?" },
        { item: "report.md:1", text: "Say which service." },
      ],
      handoffHash: frozenHash(g),
      reviewer: "alice",
      key: ALICE_KEY,
    });
    expect(receipt.feedback).toBeNull();
    const stored = readRun(g.runFile, homeOf(g)).state.workflows[PLANNER]?.reviews[0];
    expect(stored?.comments).toEqual([
      { item: "A2", kind: "action", text: "Who runs the rollback?" },
      { item: "report.md:1", kind: "file", text: "Say which service." },
    ]);
    expect(verifyReceiptSignature(stored as never)).toBe(true);
    const comments = stored?.comments ?? [];
    const tampered = { ...stored, comments: [{ ...comments[0], text: "Approve as is." }, comments[1]] };
    expect(verifyReceiptSignature(tampered as never)).toBe(false);
    expect(verifyReceiptSignature({ ...stored, comments: comments.slice(1) } as never)).toBe(false);
  });

  it("present shows the planner the comments by item, and on the next revision whether each item changed", async () => {
    const g = makeGateRun();
    await startRun(g);
    await freeze(g);
    const store = storeOf(g);
    await reviewPairPlan({
      run: g.runFile,
      store,
      planner: PLANNER,
      decision: "changes_requested",
      comments: [
        { item: "A1", text: "Add a timeout\u001b[31m too." },
        { item: "A2", text: "Fine." },
      ],
      handoffHash: frozenHash(g),
      reviewer: "alice",
    });
    const asked = await presentPlan(store, g.runFile, PLANNER);
    expect(asked.requestedComments.map((c) => c.item)).toEqual(["A1", "A2"]);
    expect(asked.markdown).toContain("## Changes requested on this revision, by item");
    expect(asked.markdown).toContain("- `+ACTION:A1`: Add a timeout");
    // The reviewer's words reach the agent's terminal cleaned, like every text of the plan.
    expect(asked.markdown).not.toContain("\u001b");
    const file = path.join(g.handoff, "action_plan.json");
    const plan = JSON.parse(readFileSync(file, "utf8"));
    plan.actions[0].summary = `${plan.actions[0].summary}, with a 5 s timeout`;
    writeFileSync(file, JSON.stringify(plan));
    await freeze(g);
    const next = await presentPlan(store, g.runFile, PLANNER);
    expect(next.previousComments.map((c) => `${c.item} ${c.change}`)).toEqual(["A1 changed", "A2 unchanged"]);
    expect(next.markdown).toMatch(/- `\+ACTION:A1`: Add a timeout.* — \*\*changed\*\*/);
    expect(next.markdown).toContain("- `+ACTION:A2`: Fine. — **unchanged**");
  });

  it("the CLI reads each --comment ITEM=TEXT into the receipt and refuses 51 before reading any", async () => {
    const g = makeGateRun();
    await startRun(g);
    await freeze(g);
    const o = { home: g.home, decision: "changes_requested", handoffHash: frozenHash(g), reviewer: "alice" };
    await expect(runReview(g.runFile, PLANNER, { ...o, comment: Array.from({ length: 51 }, () => "no equals sign") })).rejects.toThrow(
      "51 --comment options is over the limit of 50",
    );
    const r = await runReview(g.runFile, PLANNER, { ...o, comment: ["A1=Add a timeout = 5 s", "report.md:1=Which service?"] });
    expect(r.text).toContain("comment on A1 (action): Add a timeout = 5 s");
    expect(r.text).toContain("comment on report.md:1 (file): Which service?");
  });

  it("refuses an unknown item and changes nothing", async () => {
    const g = makeGateRun();
    await startRun(g);
    await freeze(g);
    const before = readRun(g.runFile, homeOf(g)).file.events.length;
    await expect(
      reviewPairPlan({
        run: g.runFile,
        store: storeOf(g),
        planner: PLANNER,
        decision: "changes_requested",
        comments: [{ item: "A7", text: "x" }],
        reviewer: "alice",
      }),
    ).rejects.toThrow(/^refused: "A7" is not an evidence item/);
    await expect(
      reviewPairPlan({
        run: g.runFile,
        store: storeOf(g),
        planner: PLANNER,
        decision: "approved",
        handoffHash: frozenHash(g),
        comments: [{ item: "A1", text: "x" }],
        reviewer: "alice",
      }),
    ).rejects.toThrow(/--comment goes with --decision changes_requested/);
    expect(readRun(g.runFile, homeOf(g)).file.events.length).toBe(before);
  });
});
