import { describe, expect, it } from "vitest";
import type { Diagnostic } from "./diagnostic.js";
import { formatDiagnostic } from "./format-diagnostic.js";

const base: Diagnostic = {
  code: "PAIR_METADATA",
  severity: "error",
  file: "debugging/md-29-debugging-planner.md",
  line: 11,
  col: 1,
  message: "MD-29: a paired planner must declare `exact_twin_only: true`, found `false`",
  promptId: "MD-29",
  field: "exact_twin_only",
};

describe("formatDiagnostic", () => {
  it("prints an error as `path:line:col CODE message`", () => {
    expect(formatDiagnostic(base)).toBe(
      "debugging/md-29-debugging-planner.md:11:1 PAIR_METADATA MD-29: a paired planner must declare `exact_twin_only: true`, found `false`",
    );
  });

  it("marks a warning after its code and keeps the same shape", () => {
    const line = formatDiagnostic({ ...base, code: "REF_CYCLE", severity: "warning", line: 4, col: 11, message: "cycle" });
    expect(line).toBe("debugging/md-29-debugging-planner.md:4:11 REF_CYCLE (warning) cycle");
    expect(line).toMatch(/^[^:\s]+:\d+:\d+ [A-Z_]+ /);
  });

  it("prints one line for a one-line message", () => {
    expect(formatDiagnostic(base).split("\n")).toHaveLength(1);
  });
});
