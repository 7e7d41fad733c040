import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { pathOverBudget, resolveRealPath } from "./resolve-real-path.js";

const root = realpathSync(mkdtempSync(path.join(tmpdir(), "twinlock-realpath-")));
mkdirSync(path.join(root, "cart", "deep"), { recursive: true });
mkdirSync(path.join(root, "elsewhere", "deep"), { recursive: true });
symlinkSync(path.join(root, "elsewhere", "deep"), path.join(root, "cart", "sub"));
symlinkSync("../elsewhere", path.join(root, "cart", "rel"));
symlinkSync("loop", path.join(root, "loop"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("resolveRealPath", () => {
  it("goes up from where a link points when a .. follows it, as the kernel does", () => {
    expect(resolveRealPath("cart/sub/../cache.go", root)).toBe(path.join(root, "elsewhere", "cache.go"));
    expect(resolveRealPath(`${root}/cart/rel/deep/../x`, "/")).toBe(path.join(root, "elsewhere", "x"));
  });

  it("appends the parts that do not exist yet, a .. among them taking one back", () => {
    expect(resolveRealPath("cart/new/more/../x.go", root)).toBe(path.join(root, "cart", "new", "x.go"));
    expect(resolveRealPath("cart/new/../sub/../y", root)).toBe(path.join(root, "elsewhere", "y"));
    expect(resolveRealPath("/../..", root)).toBe("/");
  });

  it("gives what the C library's realpath gives for any existing path written with ., .. and links (property)", () => {
    const part = fc.constantFrom("cart", "deep", "sub", "rel", "elsewhere", ".", "..", "");
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), (parts) => {
        const p = [root, ...parts].join("/");
        let expected: string | undefined;
        try {
          expected = realpathSync.native(p);
        } catch {
          return;
        }
        expect(resolveRealPath(p, "/")).toBe(expected);
      }),
    );
  });

  it("refuses a link loop and a path over the path budget before a file is looked at", () => {
    expect(() => resolveRealPath("loop/x", root)).toThrow(/too many symbolic links/);
    expect(() => resolveRealPath(`${"a/".repeat(2100)}x`, root)).toThrow(/longer than the 4,096-byte limit/);
    expect(pathOverBudget("/".repeat(1100))).toMatch(/1,101 parts, more than the 1,024-part limit/);
    expect(pathOverBudget(`${root}/cart/x.go`)).toBeUndefined();
  });
});
