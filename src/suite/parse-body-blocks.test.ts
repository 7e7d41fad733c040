import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldText, parseBodyBlocks } from "./parse-body-blocks.js";

describe("parseBodyBlocks", () => {
  it("finds each block with its content and the file position of its opening tag", () => {
    const body = "# T\n\n<tool_policy>\nread only\n</tool_policy>\n  <decision_rules>stop</decision_rules>\n";
    const blocks = parseBodyBlocks(body, 10);
    // toMatchObject reads `position` through its getter, which toEqual (own properties only) would not.
    expect(blocks.get("tool_policy")).toMatchObject({
      tag: "tool_policy",
      content: "\nread only\n",
      position: { line: 12, col: 1 },
      closed: true,
    });
    expect(blocks.get("decision_rules")).toMatchObject({
      tag: "decision_rules",
      content: "stop",
      position: { line: 15, col: 3 },
      closed: true,
    });
  });

  it("finds a tag right after a `<` that opens no tag, and tags at the body's very end", () => {
    const blocks = parseBodyBlocks("a << b <<x>1</x> <y_2>", 1);
    expect([...blocks.keys()]).toEqual(["x", "y_2"]);
    expect(blocks.get("x")).toMatchObject({ content: "1", closed: true, position: { line: 1, col: 9 } });
    expect(blocks.get("y_2")).toMatchObject({ content: "", closed: false });
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

  it("finds exactly the blocks the pattern <[a-z][a-z0-9_]*> … </tag> describes, at the same positions", () => {
    const text = fc
      .array(fc.constantFrom("<", ">", "</", "a", "b", "_", "1", "Z", "-", " ", "\n", "<a>", "</a>", "<b_1>", "</b_1>", "<<"), {
        maxLength: 40,
      })
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 50 }), (body, bodyLine) => {
        const found = [...parseBodyBlocks(body, bodyLine)].map(([tag, b]) => [tag, b.content, b.closed, b.position]);
        expect(found).toEqual(blocksByPattern(body, bodyLine));
      }),
      { numRuns: 2000 },
    );
  });
});

/** The blocks as the tag pattern finds them, the first of each tag, with positions counted line by line. */
function blocksByPattern(body: string, bodyLine: number): unknown[] {
  const seen = new Map<string, unknown[]>();
  for (const m of body.matchAll(/<([a-z][a-z0-9_]*)>/g)) {
    const tag = m[1] as string;
    if (seen.has(tag)) continue;
    const start = m.index + m[0].length;
    const end = body.indexOf(`</${tag}>`, start);
    const before = body.slice(0, m.index).split("\n");
    const position = { line: bodyLine + before.length - 1, col: (before.at(-1) as string).length + 1 };
    seen.set(tag, [tag, body.slice(start, end === -1 ? body.length : end), end !== -1, position]);
  }
  return [...seen.values()];
}

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
});
