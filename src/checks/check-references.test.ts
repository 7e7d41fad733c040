import { describe, expect, it } from "vitest";
import { indexSuite } from "../suite/load-suite.js";
import type { Prompt } from "../suite/prompt.js";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import { BASE_FILES, baseSuite, colOf, executorText, lineOf, plannerText, unpairedText } from "../test-support/prompt-builder.js";
import { checkReferences } from "./check-references.js";

const MD20 = BASE_FILES["MD-20"];

describe("checkReferences", () => {
  it("reports nothing on a suite whose references all resolve", () => {
    expect(checkReferences(suiteFromFiles(baseSuite()))).toEqual([]);
  });

  it("reports an unknown `requires` ID at that item's line and column", () => {
    const text = unpairedText("MD-20", "executive", { frontmatter: { requires: ["MD-01", "MD-77"] } });
    const [d, ...rest] = checkReferences(suiteFromFiles({ ...baseSuite(), [MD20]: text }));
    expect(rest).toEqual([]);
    const line = lineOf(text, "requires:");
    expect(d).toMatchObject({
      code: "REF_UNKNOWN",
      severity: "error",
      file: MD20,
      line,
      col: colOf(text, line, "MD-77"),
      promptId: "MD-20",
      field: "requires",
    });
    expect(d?.message).toContain("MD-77");
  });

  it("reports an unknown `related_prompts` ID written as a block list at that item's own line", () => {
    const text = unpairedText("MD-20", "executive").replace("related_prompts: []", "related_prompts:\n  - MD-01\n  - MD-88");
    const [d] = checkReferences(suiteFromFiles({ ...baseSuite(), [MD20]: text }));
    expect(d).toMatchObject({ code: "REF_UNKNOWN", line: lineOf(text, "  - MD-88"), col: 5, field: "related_prompts" });
  });

  it("reports a prompt requiring itself", () => {
    const text = unpairedText("MD-20", "executive", { frontmatter: { requires: ["MD-01", "MD-20"] } });
    const ds = checkReferences(suiteFromFiles({ ...baseSuite(), [MD20]: text }));
    expect(ds).toEqual([
      expect.objectContaining({ code: "REF_SELF", line: lineOf(text, "requires:"), field: "requires", promptId: "MD-20" }),
    ]);
  });

  it("reports a prompt listing itself as related", () => {
    const text = unpairedText("MD-20", "executive", { frontmatter: { related_prompts: ["MD-20"] } });
    const ds = checkReferences(suiteFromFiles({ ...baseSuite(), [MD20]: text }));
    expect(ds).toEqual([expect.objectContaining({ code: "REF_SELF", field: "related_prompts" })]);
  });

  it("prints a `requires` cycle among unpaired control prompts as a warning only", () => {
    const a = unpairedText("MD-01", "control", { frontmatter: { requires: ["MD-02"] } });
    const b = unpairedText("MD-02", "control", { frontmatter: { requires: ["MD-01"] } });
    const ds = checkReferences(suiteFromFiles({ ...baseSuite(), [BASE_FILES["MD-01"]]: a, "control/md-02.md": b }));
    expect(ds).toEqual([
      expect.objectContaining({ code: "REF_CYCLE", severity: "warning", file: BASE_FILES["MD-01"], line: lineOf(a, "requires:") }),
    ]);
    expect(ds[0]?.message).toContain("MD-01 → MD-02");
  });

  it("reports a cycle of three unpaired prompts once", () => {
    const files = {
      ...baseSuite(),
      "c/md-02.md": unpairedText("MD-02", "gate", { frontmatter: { requires: ["MD-03"] } }),
      "c/md-03.md": unpairedText("MD-03", "gate", { frontmatter: { requires: ["MD-04"] } }),
      "c/md-04.md": unpairedText("MD-04", "gate", { frontmatter: { requires: ["MD-02"] } }),
    };
    const ds = checkReferences(suiteFromFiles(files));
    expect(ds.map((d) => [d.code, d.severity])).toEqual([["REF_CYCLE", "warning"]]);
  });

  it("reports a `requires` cycle through a paired prompt as an error naming the paired prompts", () => {
    const text = plannerText("MD-10", "MD-11", { frontmatter: { requires: ["MD-01", "MD-11"] } });
    const ds = checkReferences(suiteFromFiles({ ...baseSuite(), [BASE_FILES["MD-10"]]: text }));
    expect(ds).toEqual([
      expect.objectContaining({ code: "REF_CYCLE_PAIRED", severity: "error", file: BASE_FILES["MD-10"], line: lineOf(text, "requires:") }),
    ]);
    expect(ds[0]?.message).toContain("MD-10, MD-11");
  });

  it("reports a cycle through a paired prompt and unpaired ones as an error", () => {
    const files = {
      ...baseSuite(),
      [BASE_FILES["MD-11"]]: executorText("MD-11", "MD-10", { frontmatter: { requires: ["MD-10", "MD-01", "MD-20"] } }),
      [MD20]: unpairedText("MD-20", "executive", { frontmatter: { requires: ["MD-11"] } }),
    };
    const ds = checkReferences(suiteFromFiles(files));
    expect(ds.map((d) => d.code)).toEqual(["REF_CYCLE_PAIRED"]);
  });

  it("does not overflow the stack on a 50,000-prompt requires chain, and finds the cycle closing it", () => {
    const n = 50_000;
    const prompt = (i: number): Prompt => ({
      file: `c/md-${i}.md`,
      id: `MD-${i}`,
      title: undefined,
      role: "control",
      category: undefined,
      riskLevel: undefined,
      description: undefined,
      pairingRequired: false,
      pairedPromptId: null,
      requires: i === 1 ? [] : [`MD-${i - 1}`],
      relatedPrompts: [],
      defaultMode: undefined,
      allowedModes: [],
      frontmatter: {},
      positions: new Map(),
      body: "",
      bodyLine: 1,
      source: "",
      sha256: "sha256:0",
    });
    const chain = Array.from({ length: n }, (_, i) => prompt(i + 1));
    expect(checkReferences(indexSuite("/memory", chain, {}))).toEqual([]);
    (chain[0] as Prompt).requires = [`MD-${n}`];
    expect(checkReferences(indexSuite("/memory", chain, {})).map((d) => d.code)).toEqual(["REF_CYCLE"]);
  });
});
