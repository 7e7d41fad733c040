import { createHash } from "node:crypto";
import { applyPatch } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { randomLines } from "../test-support/random-lines.js";
import { DIFF_BUDGET, diffWithinBudget } from "./diff-within-budget.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe("diffWithinBudget", () => {
  it("answers two 117 KB revisions of random lines 'too large to diff', with each revision's sha256 and size, without searching", async () => {
    const before = randomLines(1, 3000);
    const after = randomLines(2, 3000);
    expect(before.length).toBeGreaterThan(117 * 1024);
    const d = await diffWithinBudget({ name: "a/notes.txt", text: before }, { name: "b/notes.txt", text: after });
    expect(d).toEqual({
      kind: "too_large",
      reason: "edits",
      limit: DIFF_BUDGET.maxEdits,
      found: 6000,
      before: { size: before.length, sha256: sha256(before) },
      after: { size: after.length, sha256: sha256(after) },
    });
  });

  it("gives up on lines in a new order (nothing added or removed) once more than the edit limit would be needed", async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}\n`);
    const reversed = [...lines].reverse();
    const d = await diffWithinBudget({ name: "a", text: lines.join("") }, { name: "b", text: reversed.join("") });
    expect(d).toMatchObject({ kind: "too_large", reason: "edits", limit: DIFF_BUDGET.maxEdits, found: null });
  });

  it("refuses a side over the byte limit before splitting it, naming the limit and the size", async () => {
    const big = "x".repeat(DIFF_BUDGET.maxBytes + 1);
    const d = await diffWithinBudget(null, { name: "b/big.txt", text: big });
    expect(d).toEqual({
      kind: "too_large",
      reason: "bytes",
      limit: DIFF_BUDGET.maxBytes,
      found: DIFF_BUDGET.maxBytes + 1,
      before: null,
      after: { size: big.length, sha256: sha256(big) },
    });
  });

  it("counts bytes as UTF-8, not UTF-16 units", async () => {
    const text = "é".repeat(DIFF_BUDGET.maxBytes / 2 + 1);
    const d = await diffWithinBudget({ name: "a", text: "" }, { name: "b", text });
    expect(d).toMatchObject({ kind: "too_large", reason: "bytes", found: DIFF_BUDGET.maxBytes + 2 });
  });

  it("refuses a side over the line limit, naming it", async () => {
    const text = "\n".repeat(DIFF_BUDGET.maxLines + 1);
    const d = await diffWithinBudget({ name: "a", text: "" }, { name: "b", text });
    expect(d).toMatchObject({ kind: "too_large", reason: "lines", limit: DIFF_BUDGET.maxLines, found: DIFF_BUDGET.maxLines + 1 });
  });

  it("diffs a small edit of a large file as a unified diff from its --- header, with three lines of context", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i}\n`);
    const edited = [...lines];
    edited[1500] = "changed\n";
    const d = await diffWithinBudget({ name: "a/f.txt", text: lines.join("") }, { name: "b/f.txt", text: edited.join("") });
    expect(d).toEqual({
      kind: "diff",
      patch: [
        "--- a/f.txt",
        "+++ b/f.txt",
        "@@ -1498,7 +1498,7 @@",
        " line 1497",
        " line 1498",
        " line 1499",
        "-line 1500",
        "+changed",
        " line 1501",
        " line 1502",
        " line 1503",
        "",
      ].join("\n"),
    });
  });

  it("shows a new file against /dev/null", async () => {
    const d = await diffWithinBudget(null, { name: "b/new.md", text: "one\ntwo" });
    expect(d).toEqual({
      kind: "diff",
      patch: "--- /dev/null\n+++ b/new.md\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n",
    });
  });

  // The `diff` package's applyPatch guesses line endings by default: a patch whose every line ends in \r (here its one
  // added line, "a\r" at the end of the file) is taken for a Windows patch and its \r dropped when the text it applies
  // to has only \n endings. The patch is byte-exact, and is applied as written (fast-check seed 1956427048).
  const applyExactly = (text: string, patch: string) => applyPatch(text, patch, { autoConvertLineEndings: false });

  it("keeps a \r that ends the new text's last line, and the patch turns the old text into the new byte for byte", async () => {
    const d = await diffWithinBudget(
      { name: "a/x", text: "a\n" },
      { name: "b/x", text: "a\na\r" },
      { maxBytes: 4, maxLines: 2, maxEdits: 1, timeoutMs: 60_000, context: 0 },
    );
    expect(d).toEqual({ kind: "diff", patch: "--- a/x\n+++ b/x\n@@ -1,0 +2,1 @@\n+a\r\n\\ No newline at end of file\n" });
    expect(applyExactly("a\n", (d as { patch: string }).patch)).toBe("a\na\r");
  });

  const line = fc.oneof(fc.constantFrom("a", "b", "c", "", " a", "a\r"), fc.string({ maxLength: 6, unit: "grapheme" }));
  const text = fc
    .tuple(fc.array(line, { maxLength: 40 }), fc.boolean())
    .map(([lines, newlineAtEnd]) => lines.map((l) => l.replace(/\n/g, "")).join("\n") + (newlineAtEnd && lines.length > 0 ? "\n" : ""));
  const budget = fc.record({
    maxBytes: fc.integer({ min: 0, max: 400 }),
    maxLines: fc.integer({ min: 0, max: 50 }),
    maxEdits: fc.integer({ min: 0, max: 60 }),
    timeoutMs: fc.constant(60_000),
    context: fc.integer({ min: 0, max: 4 }),
  });

  it("for any two texts and any budget, answers a diff that turns the old text into the new, or 'too large' with both digests", async () => {
    await fc.assert(
      fc.asyncProperty(fc.option(text, { nil: null }), text, fc.option(budget, { nil: undefined }), async (old, now, b) => {
        const d = await diffWithinBudget(old === null ? null : { name: "a/x", text: old }, { name: "b/x", text: now }, b);
        if (d.kind === "diff") {
          expect(d.patch.startsWith(`--- ${old === null ? "/dev/null" : "a/x"}\n+++ b/x\n`)).toBe(true);
          expect(applyExactly(old ?? "", d.patch)).toBe(now);
        } else {
          expect(d.kind).toBe("too_large");
          expect(b).toBeDefined();
          expect(d.before).toEqual(old === null ? null : { size: Buffer.byteLength(old), sha256: sha256(old) });
          expect(d.after).toEqual({ size: Buffer.byteLength(now), sha256: sha256(now) });
        }
      }),
      { numRuns: 400 },
    );
  });
});
