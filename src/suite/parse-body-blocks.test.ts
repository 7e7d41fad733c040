import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldLineSpaces, foldText, parseBodyBlocks } from "./parse-body-blocks.js";

describe("parseBodyBlocks", () => {
  it("finds each block with its content and the file position of its opening tag", () => {
    const body = "# T\n\n<tool_policy>\nread only\n</tool_policy>\n  <decision_rules>stop</decision_rules>\n";
    const blocks = parseBodyBlocks(body, 10);
    expect(blocks.get("tool_policy")).toEqual({
      tag: "tool_policy",
      content: "\nread only\n",
      position: { line: 12, col: 1 },
      closed: true,
    });
    expect(blocks.get("decision_rules")).toEqual({ tag: "decision_rules", content: "stop", position: { line: 15, col: 3 }, closed: true });
  });

  it("marks a block that never closes and runs it to the end", () => {
    const blocks = parseBodyBlocks("<runtime_markers>\n- a\n", 1);
    expect(blocks.get("runtime_markers")).toMatchObject({ closed: false, content: "\n- a\n" });
  });

  it("keeps the first block of a tag when a tag appears twice", () => {
    const blocks = parseBodyBlocks("<a>one</a>\n<a>two</a>", 1);
    expect(blocks.get("a")?.content).toBe("one");
    expect(blocks.size).toBe(1);
  });

  it("ignores tags that are not lower-case identifiers", () => {
    expect([...parseBodyBlocks("<Div>x</Div> <1a>y</1a> <a-b>z</a-b>", 1).keys()]).toEqual([]);
  });

  it("finds nothing in an empty body", () => {
    expect(parseBodyBlocks("", 5).size).toBe(0);
  });
});

describe("foldText", () => {
  it("lower-cases and folds every run of white space to one space", () => {
    expect(foldText("  User \t  Review\n\nNOW ")).toBe("user review now");
  });
});

/** Text rich in white space of every kind: spaces, tabs, line ends, no-break and ideographic spaces. */
const spacedText = fc
  .array(fc.constantFrom(" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\v", "a", "Word", "x."), { maxLength: 30 })
  .map((parts) => parts.join(""));

describe("white-space folding", () => {
  it("folds text exactly as replacing every run of white space with one space does", () => {
    fc.assert(
      fc.property(spacedText, (text) => {
        expect(foldText(text)).toBe(text.toLowerCase().replace(/\s+/g, " ").trim());
      }),
      { numRuns: 2000 },
    );
  });

  it("folds runs of white space but not line feeds, exactly as replacing every such run with one space does", () => {
    expect(foldLineSpaces("a \t b\n\n  c d")).toBe("a b\n\n c d");
    fc.assert(
      fc.property(spacedText, (text) => {
        expect(foldLineSpaces(text)).toBe(text.replace(/[^\S\n]+/g, " "));
      }),
      { numRuns: 2000 },
    );
  });
});
