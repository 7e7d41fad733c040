import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cleanText, findDeceptiveChar, isPlainAscii } from "./clean-text.js";

describe("findDeceptiveChar", () => {
  it("passes printable ASCII with tabs, LF and CR LF line ends", () => {
    expect(findDeceptiveChar("a: 1\r\nb:\tc\n\n# done\r\n")).toBeUndefined();
  });

  it("finds a lone CR, with its line and column, but not a CR that ends a line", () => {
    expect(findDeceptiveChar("a: 1\r\nb: x\ry\n")).toEqual({ line: 2, col: 5, codePoint: "U+000D" });
    expect(findDeceptiveChar("ends with a CR\r")).toEqual({ line: 1, col: 15, codePoint: "U+000D" });
  });

  it("finds a control or direction character among printable text", () => {
    expect(findDeceptiveChar("ok\nal\u0007ert")).toEqual({ line: 2, col: 3, codePoint: "U+0007" });
    expect(findDeceptiveChar("x\u202Ey")).toEqual({ line: 1, col: 2, codePoint: "U+202E" });
  });

  it("finds and marks every character Unicode draws as nothing, not only format ones: Mongolian and Khmer ones can spell a hidden message", () => {
    for (const c of ["\u180b", "\u180c", "\u180d", "\u180f", "\u17b4", "\u17b5", "\u2064", "\ufff0", "\u{1d159}"]) {
      const code = `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
      expect(findDeceptiveChar(`summary${c}x`), code).toEqual({ line: 1, col: 8, codePoint: code });
      expect(cleanText(`summary${c}x`)).toBe(`summary⟨${code}⟩x`);
    }
    // A default-ignorable character does not hide in a sea of them either: each one is marked.
    expect(cleanText("X\u180b\u180c\u17b4")).toBe("X⟨U+180B⟩⟨U+180C⟩⟨U+17B4⟩");
  });

  it("finds nothing in any text of printable ASCII, tabs and CR LF line ends", () => {
    const printable = fc.constantFrom("a", " ", "\t", "\n", "\r\n", "~", "#", ":");
    fc.assert(
      fc.property(
        fc.array(printable).map((parts) => parts.join("")),
        (text) => {
          expect(findDeceptiveChar(text)).toBeUndefined();
        },
      ),
    );
  });
});

describe("isPlainAscii", () => {
  it("holds for printable ASCII, tabs and line ends, and for no other character", () => {
    for (let c = 0; c < 0x2100; c++) {
      const char = String.fromCharCode(c);
      expect(isPlainAscii(`a${char}b`), `U+${c.toString(16)}`).toBe(
        char === "\t" || char === "\n" || char === "\r" || (c >= 0x20 && c <= 0x7e),
      );
    }
  });

  it("leaves a lone CR as the only deceptive character plain text can hold", () => {
    const part = fc.constantFrom(
      "a",
      " ",
      "\t",
      "\n",
      "\r",
      "\r\n",
      "~",
      "\u0007",
      "\u00e9",
      "\u202e",
      "\ufe0f",
      "\u{1f469}\u200d\u{1f4bb}",
    );
    fc.assert(
      fc.property(
        fc.array(part).map((parts) => parts.join("")),
        (text) => {
          if (isPlainAscii(text) && !/\r(?!\n)/.test(text)) expect(findDeceptiveChar(text)).toBeUndefined();
          if (isPlainAscii(text)) expect(findDeceptiveChar(text)?.codePoint ?? "U+000D").toBe("U+000D");
        },
      ),
      { numRuns: 1000 },
    );
  });
});
