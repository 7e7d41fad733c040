import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { naturalCompare } from "./natural-order.js";

const COLLATOR = new Intl.Collator("en", { numeric: true });
const sign = (n: number) => Math.sign(n);

/** Strings made of what prompt IDs are made of, with runs of digits (leading zeros too) and dashes. */
const idLike = fc
  .array(fc.oneof(fc.constantFrom("-", "0", "00", "9", "10", "007"), fc.stringMatching(/^[A-Z0-9-]{1,6}$/)), { maxLength: 8 })
  .map((parts) => parts.join("").slice(0, 64));

describe("naturalCompare", () => {
  it("puts MD-9 before MD-10 and MD-101 after MD-25", () => {
    expect(["MD-101", "MD-10", "MD-9", "MD-25"].sort(naturalCompare)).toEqual(["MD-9", "MD-10", "MD-25", "MD-101"]);
  });

  it("orders ID-like strings exactly as the numeric en collator does", () => {
    fc.assert(
      fc.property(idLike, idLike, (a, b) => {
        expect(sign(naturalCompare(a, b))).toBe(sign(COLLATOR.compare(a, b)));
      }),
      { numRuns: 5000 },
    );
  });

  it("orders any other strings as the numeric en collator does", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(sign(naturalCompare(a, b))).toBe(sign(COLLATOR.compare(a, b)));
      }),
    );
    expect(sign(naturalCompare("md-2", "MD-10"))).toBe(sign(COLLATOR.compare("md-2", "MD-10")));
  });
});
