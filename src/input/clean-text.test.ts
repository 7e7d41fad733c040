import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findDeceptiveChar } from "./clean-text.js";

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
