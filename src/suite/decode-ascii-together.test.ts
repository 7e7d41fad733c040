import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeAsciiTogether } from "./decode-ascii-together.js";

const utf8 = (s: string) => Buffer.from(s, "utf8");

describe("decodeAsciiTogether", () => {
  it("gives each ASCII buffer its text, and leaves any other buffer to its reader", () => {
    expect(decodeAsciiTogether([utf8("---\na: 1\n"), utf8("caf\u00e9"), utf8(""), utf8("x\0y"), utf8("last")])).toEqual([
      "---\na: 1\n",
      undefined,
      "",
      undefined,
      "last",
    ]);
    expect(decodeAsciiTogether([])).toEqual([]);
  });

  it("decodes every ASCII buffer exactly as decoding it alone does", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary", maxLength: 40 })), (strings) => {
        const buffers = strings.map(utf8);
        const texts = decodeAsciiTogether(buffers);
        for (const [i, bytes] of buffers.entries()) {
          const ascii = bytes.every((b) => b > 0 && b < 0x80);
          expect(texts[i]).toBe(ascii ? bytes.toString("utf8") : undefined);
        }
      }),
      { numRuns: 500 },
    );
  });
});
