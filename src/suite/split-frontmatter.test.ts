import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitFrontmatter } from "./split-frontmatter.js";

/** The line-by-line reading the split must equal: each line without the one CR before its LF, fences found by trimEnd. */
function splitByLines(text: string) {
  const lineAt = (start: number) => {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    const line = text.charCodeAt(end - 1) === 13 && end > start ? text.slice(start, end - 1) : text.slice(start, end);
    return { line, next: nl === -1 ? -1 : nl + 1 };
  };
  const first = lineAt(0);
  if (first.line.trimEnd() !== "---") return "missing";
  const lines: string[] = [];
  let next = first.next;
  while (next !== -1) {
    const { line, next: after } = lineAt(next);
    if (line.trimEnd() === "---") {
      const rest = after === -1 ? "" : text.slice(after);
      return { lines, body: rest.replace(/\r\n/g, "\n"), bodyLine: lines.length + 3 };
    }
    lines.push(line);
    next = after;
  }
  return "unclosed";
}

const piece = fc.constantFrom("---", "--- ", "---\u00a0", "----", "-- -", "\n", "\r\n", "\r", "a: 1", " ", "x", "#", "\t");
const text = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(""));

describe("splitFrontmatter", () => {
  it("reads the frontmatter between the fences and the body after them", () => {
    const split = splitFrontmatter("---\nprompt_id: MD-1\ntitle: x\n---\n# Body\n");
    expect(split).toMatchObject({ yamlText: "prompt_id: MD-1\ntitle: x", lineCount: 2, body: "# Body\n", bodyLine: 5 });
  });

  it("reads CRLF files as LF, and says when a fence is missing or never closed", () => {
    const split = splitFrontmatter("---\r\na: 1\r\n---\r\nbody\r\n");
    expect(split).toMatchObject({ yamlText: "a: 1", lineCount: 1, body: "body\n", bodyLine: 4 });
    expect(splitFrontmatter("# no frontmatter\n")).toBe("missing");
    expect(splitFrontmatter("---\na: 1\n")).toBe("unclosed");
  });

  it("splits every text exactly as reading it line by line does", () => {
    fc.assert(
      fc.property(text, fc.boolean(), (t, fenced) => {
        const input = fenced ? `---\n${t}` : t;
        const expected = splitByLines(input);
        const split = splitFrontmatter(input);
        if (typeof expected === "string") {
          expect(split).toBe(expected);
          return;
        }
        if (typeof split === "string") throw new Error(`split ${JSON.stringify(input)} as ${split}`);
        expect(split.yamlText).toBe(expected.lines.join("\n"));
        expect(split.lineCount).toBe(expected.lines.length);
        expect(split.body).toBe(expected.body);
        expect(split.bodyLine).toBe(expected.bodyLine);
      }),
      { numRuns: 3000 },
    );
  });
});
