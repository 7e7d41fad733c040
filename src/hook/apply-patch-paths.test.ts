import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyPatchPaths, trimEdgeSpace } from "./apply-patch-paths.js";

/** The trim the hook used before issue 24: right on every line, and quadratic on a long run of spaces. */
const OLD_TRIM = /^[\s\u0085]+|[\s\u0085]+$/g;

const SPACES = [
  " ",
  "\t",
  "\u000b",
  "\f",
  "\r",
  "\n",
  "\u0085",
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u200a",
  "\u2028",
  "\u2029",
  "\u202f",
  "\u205f",
  "\u3000",
  "\ufeff",
];

describe("the apply_patch header trim", () => {
  it("trims exactly the white space JavaScript's \\s and Rust's (with U+0085) trim, at either end", () => {
    const char = fc.oneof(fc.constantFrom(...SPACES, "a", "*", ":", "\u200b", "\u0084", "\u0086"), fc.string({ maxLength: 1 }));
    fc.assert(
      fc.property(fc.array(char, { maxLength: 40 }), (chars) => {
        const line = chars.join("");
        expect(trimEdgeSpace(line)).toBe(line.replace(OLD_TRIM, ""));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads a patch whose one line is 400,000 spaces before an x in linear time (the old trim, a regular expression, took minutes and let the hook time out: issue 24)", () => {
    const patch = `*** Begin Patch\n*** Add File: /elsewhere/x.txt\n+${" ".repeat(400_000)}x\n${" ".repeat(400_000)}***x\n*** End Patch\n`;
    expect(applyPatchPaths(patch)).toEqual({
      problem: expect.stringContaining("starts like a header but is none Codex reads"),
    });
    const plain = `*** Begin Patch\n*** Add File: /elsewhere/x.txt\n+${" ".repeat(400_000)}x\n*** End Patch\n`;
    expect(applyPatchPaths(plain)).toEqual({ paths: ["/elsewhere/x.txt"] });
  }, 20_000);
});
