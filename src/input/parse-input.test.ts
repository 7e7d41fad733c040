import { describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import { clip, parseCount, parseMode, parsePromptId, parseText } from "./parse-input.js";

describe("parse-input (options of validate and new-pair)", () => {
  it("accepts a prompt ID and refuses other forms, quoting the input", () => {
    expect(parsePromptId("MD-29")).toBe("MD-29");
    for (const bad of ["md-29", "MD29", "MD-", "-29", " MD-29", "MD-29\n"]) expect(() => parsePromptId(bad), bad).toThrow(UsageError);
    expect(() => parsePromptId("md-29", "--planner")).toThrow(
      '--planner "md-29" is not a prompt ID; did you mean MD-29? expected the form MD-29',
    );
    expect(() => parsePromptId("MD29", "--planner")).toThrow('--planner "MD29" is not a prompt ID; expected the form MD-29');
  });

  it("accepts a mode and lists the modes otherwise", () => {
    expect(parseMode("APPLY_SAFE")).toBe("APPLY_SAFE");
    expect(() => parseMode("apply_safe")).toThrow(/AUDIT_ONLY, PLAN_ONLY, DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY/);
  });

  it("accepts a whole number and refuses signs, fractions and huge numbers", () => {
    expect(parseCount("0", "--n")).toBe(0);
    expect(parseCount("42", "--n")).toBe(42);
    for (const bad of ["-1", "1.5", "1e3", "", "1234567890", " 4"]) expect(() => parseCount(bad, "--n"), bad).toThrow(UsageError);
  });

  it("refuses a NUL byte and over-long text in free text", () => {
    expect(parseText("fine", "--feedback")).toBe("fine");
    expect(() => parseText("a\u0000b", "--feedback")).toThrow("--feedback contains a NUL byte");
    expect(() => parseText("x".repeat(11), "--feedback", 10)).toThrow("--feedback is 11 bytes, over the 10-byte limit");
  });

  it("clips long input for an error line", () => {
    expect(clip("abc", 5)).toBe("abc");
    expect(clip("abcdefgh", 5)).toBe("abcde…");
  });
});
