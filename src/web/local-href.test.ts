import { describe, expect, it } from "vitest";
import { localHref } from "./local-href.js";

describe("localHref", () => {
  it("keeps a path on this server, escaped", () => {
    expect(localHref("/runs/run_1/pairs/MD-29/revisions/2?x=1&y=2")).toBe("/runs/run_1/pairs/MD-29/revisions/2?x=1&amp;y=2");
  });

  it("turns any other URL into #", () => {
    for (const url of ["https://evil.example/", "//evil.example/", "/\\evil.example", "javascript:alert(1)", "runs/1", "/a b", "/a\nb", ""])
      expect(localHref(url)).toBe("#");
  });
});
