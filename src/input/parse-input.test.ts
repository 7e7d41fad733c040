import { describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import {
  clip,
  parseActionIds,
  parseChoice,
  parseCount,
  parseDuration,
  parseMode,
  parsePromptId,
  parseStopReason,
  parseText,
} from "./parse-input.js";

describe("parse-input (options of validate and new-pair)", () => {
  it("accepts a prompt ID and refuses other forms, quoting the input", () => {
    expect(parsePromptId("MD-29")).toBe("MD-29");
    for (const bad of ["md-29", "MD29", "MD-", "-29", " MD-29", "MD-29\n"]) expect(() => parsePromptId(bad), bad).toThrow(UsageError);
    expect(() => parsePromptId("md-29", "--planner")).toThrow(
      '--planner "md-29" is not a prompt ID; did you mean MD-29? expected the form MD-29',
    );
    expect(() => parsePromptId("MD29", "--planner")).toThrow('--planner "MD29" is not a prompt ID; expected the form MD-29');
  });

  it("reads +ACTION IDs with or without their prefix, and refuses an empty list or an empty item", () => {
    expect(parseActionIds("A1, +ACTION:A3", "--actions")).toEqual(["A1", "A3"]);
    expect(() => parseActionIds(" , ", "--actions")).toThrow("--actions needs at least one +ACTION ID, such as A1,A3");
    expect(() => parseActionIds("A1,,A2", "--actions")).toThrow('--actions "A1,,A2" has an empty item');
  });

  it("accepts a mode and lists the modes otherwise, with the one a near miss meant", () => {
    expect(parseMode("APPLY_SAFE")).toBe("APPLY_SAFE");
    expect(() => parseMode("apply_safe")).toThrow(
      'mode "apply_safe" is not one of AUDIT_ONLY, PLAN_ONLY, DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY; did you mean APPLY_SAFE?',
    );
  });

  it("names the choice a near miss meant (a typo, another case, a prefix), and none for a value far from every choice", () => {
    expect(parseChoice("passed", ["passed", "failed"], "--result")).toBe("passed");
    expect(() => parseChoice("pass", ["passed", "failed"], "--result")).toThrow(
      '--result "pass" is not one of passed, failed; did you mean passed?',
    );
    expect(() => parseChoice("mission-directive", ["twinlock", "mission-directives"], "--format")).toThrow(
      /did you mean mission-directives\?$/,
    );
    expect(() => parseChoice("verifed", ["verified", "failed", "rolled_back"], "--result")).toThrow(/did you mean verified\?$/);
    expect(() => parseChoice("sideways", ["passed", "failed"], "--result")).toThrow('--result "sideways" is not one of passed, failed');
    expect(() => parseChoice("sideways", ["passed", "failed"], "--result")).not.toThrow(/did you mean/);
  });

  it("reads a duration in any case, and says why 0 or a phrase is none", () => {
    expect(parseDuration("4h", "--expires-in")).toBe(4 * 3_600_000);
    expect(parseDuration("4H", "--expires-in")).toBe(4 * 3_600_000);
    expect(() => parseDuration("0m", "--expires-in")).toThrow(
      '--expires-in "0m" is no time at all; give a positive duration such as 30m, 4h or 2d',
    );
    expect(() => parseDuration("4 hours", "--expires-in")).toThrow('--expires-in "4 hours" is not a duration; write it like 30m, 4h or 2d');
  });

  it("suggests the slug a stop reason written as words meant", () => {
    expect(parseStopReason("!STOP:missing-backup")).toBe("missing-backup");
    expect(() => parseStopReason("prod incident")).toThrow(
      '--reason "prod incident" is not a slug; use lower-case words joined by -: did you mean prod-incident?',
    );
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
