import { describe, expect, it } from "vitest";
import { diffLines } from "./diff-lines.js";

describe("diffLines", () => {
  it("shows only the changed region, marking committed lines - and rebuilt lines +", () => {
    expect(diffLines("a\nb\nc\nd\n", "a\nb\nX\nd\n")).toEqual(["@@ from line 3 @@", "- c", "+ X"]);
  });

  it("shows added lines alone when nothing was removed", () => {
    expect(diffLines("a\nd\n", "a\nb\nc\nd\n")).toEqual(["@@ from line 2 @@", "+ b", "+ c"]);
  });

  it("shows lines that only moved when nothing else differs", () => {
    expect(diffLines("a\nb\nc\n", "b\na\nc\n")).toEqual(["@@ from line 1 @@", "- a", "- b", "+ b", "+ a"]);
  });

  it("caps a long difference and says how many lines were left out", () => {
    const a = Array.from({ length: 100 }, (_, i) => `old ${i}`).join("\n");
    const b = Array.from({ length: 100 }, (_, i) => `new ${i}`).join("\n");
    const out = diffLines(a, b, 10);
    expect(out).toHaveLength(12);
    expect(out[11]).toBe("… 190 more lines differ");
  });
});
