import { describe, expect, it } from "vitest";
import { accessibilityProblems } from "../test-support/html-checks.js";
import { samplePages } from "../test-support/sample-views.js";

describe("every page", () => {
  for (const [name, render] of samplePages())
    it(`${name}: has one <h1>, no skipped heading level, a label for every control, a submit button in every form and a skip link to #main`, () => {
      expect(accessibilityProblems(render())).toEqual([]);
    });
});
