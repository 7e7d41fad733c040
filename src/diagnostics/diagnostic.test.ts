import { describe, expect, it } from "vitest";
import { DIAGNOSTIC_CODES, type Diagnostic, hasErrors, sortDiagnostics } from "./diagnostic.js";

const d = (over: Partial<Diagnostic>): Diagnostic => ({
  code: "REF_UNKNOWN",
  severity: "error",
  file: "a.md",
  line: 1,
  col: 1,
  message: "m",
  ...over,
});

describe("diagnostics", () => {
  it("lists each code once, in SCREAMING_SNAKE_CASE", () => {
    expect(new Set(DIAGNOSTIC_CODES).size).toBe(DIAGNOSTIC_CODES.length);
    for (const code of DIAGNOSTIC_CODES) expect(code).toMatch(/^[A-Z][A-Z0-9_]*$/);
  });

  it("counts only errors as failing; warnings never fail a check", () => {
    expect(hasErrors([])).toBe(false);
    expect(hasErrors([d({ severity: "warning" })])).toBe(false);
    expect(hasErrors([d({ severity: "warning" }), d({ severity: "error" })])).toBe(true);
  });

  it("sorts by file, line, column, code and message, whatever the input order", () => {
    const list = [
      d({ file: "b.md", line: 1 }),
      d({ file: "a.md", line: 9, col: 2 }),
      d({ file: "a.md", line: 9, col: 1, code: "REF_SELF" }),
      d({ file: "a.md", line: 9, col: 1, code: "REF_CYCLE", message: "z" }),
      d({ file: "a.md", line: 9, col: 1, code: "REF_CYCLE", message: "a" }),
      d({ file: "a.md", line: 2 }),
    ];
    const sorted = sortDiagnostics(list);
    expect(sorted.map((x) => `${x.file}:${x.line}:${x.col}:${x.code}:${x.message}`)).toEqual([
      "a.md:2:1:REF_UNKNOWN:m",
      "a.md:9:1:REF_CYCLE:a",
      "a.md:9:1:REF_CYCLE:z",
      "a.md:9:1:REF_SELF:m",
      "a.md:9:2:REF_UNKNOWN:m",
      "b.md:1:1:REF_UNKNOWN:m",
    ]);
    expect(sortDiagnostics([...list].reverse())).toEqual(sorted);
  });

  it("does not reorder the list it was given", () => {
    const list = [d({ file: "b.md" }), d({ file: "a.md" })];
    sortDiagnostics(list);
    expect(list.map((x) => x.file)).toEqual(["b.md", "a.md"]);
  });
});
