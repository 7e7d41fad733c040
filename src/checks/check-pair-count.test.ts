import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSuite } from "../suite/load-suite.js";
import { lineOf } from "../test-support/prompt-builder.js";
import { copyExampleSuite, EXAMPLE_SUITE, removeTempDirs } from "../test-support/temp-suite.js";
import { checkPairCount } from "./check-pair-count.js";
import { validateSuite } from "./validate-suite.js";

afterAll(removeTempDirs);

describe("checkPairCount", () => {
  it("passes when no count is declared", () => {
    expect(checkPairCount(3, undefined, "twinlock.yaml declared_pairs")).toEqual([]);
  });

  it("passes when the genuine count equals the declared one", () => {
    expect(checkPairCount(6, 6, "--expect-pairs")).toEqual([]);
  });

  it("reports a config mismatch against twinlock.yaml, naming both numbers", () => {
    const [d] = checkPairCount(5, 6, "twinlock.yaml declared_pairs");
    expect(d).toMatchObject({ code: "PAIR_COUNT", severity: "error", file: "twinlock.yaml" });
    expect(d?.message).toContain("5 genuine pairs");
    expect(d?.message).toContain("declares 6");
  });

  it("reports an --expect-pairs mismatch against the command line, not a file", () => {
    const [d] = checkPairCount(1, 0, "--expect-pairs");
    expect(d).toMatchObject({ code: "PAIR_COUNT", file: ".", line: 1, col: 1 });
    expect(d?.message).toContain("1 genuine pair,");
  });

  it("lets --expect-pairs override the config's declared count", () => {
    const suite = loadSuite(EXAMPLE_SUITE);
    expect(validateSuite(suite, { expectPairs: 6 }).diagnostics).toEqual([]);
    expect(validateSuite(suite, { expectPairs: 7 }).diagnostics.map((d) => d.code)).toEqual(["PAIR_COUNT"]);
  });

  // SPEC §3: "line of the offending key where known". The key is known here.
  it("reports a config mismatch at the declared_pairs line of twinlock.yaml", () => {
    const root = copyExampleSuite();
    const config = path.join(root, "twinlock.yaml");
    const text = readFileSync(config, "utf8").replace("declared_pairs: 6", "declared_pairs: 9");
    writeFileSync(config, text);
    const d = validateSuite(loadSuite(root)).diagnostics.find((x) => x.code === "PAIR_COUNT");
    expect(d).toMatchObject({ file: "twinlock.yaml", line: lineOf(text, "declared_pairs:") });
  });
});
