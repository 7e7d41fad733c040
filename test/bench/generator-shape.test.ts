import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateRealSuite, realisticFrontmatter, realisticPromptFile, realisticPrompts } from "../../bench/lib/generate-real-suite.mjs";
import { writeHandoff } from "../../bench/lib/handoff-fixture.mjs";
import { validateSuite } from "../../src/checks/validate-suite.js";
import { checkReadiness } from "../../src/handoff/check-readiness.js";
import { loadSuite } from "../../src/suite/load-suite.js";
import { parseWithYaml } from "../../src/suite/parse-prompt-file.js";
import { parseSimpleFrontmatter } from "../../src/suite/parse-simple-frontmatter.js";
import { makeTempDir, removeTempDirs } from "../../src/test-support/temp-suite.js";

afterAll(removeTempDirs);

/**
 * The benchmark measures suites shaped like the real, public 257-prompt suite
 * teams adopt twinlock on. These tests hold its generator to that shape, so it
 * cannot drift back to frontmatter only a fast path reads.
 */
const { prompts, pairs } = realisticPrompts(257);
const frontmatters = prompts.map((p) => realisticFrontmatter(p));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("the benchmark's realistic suite generator", () => {
  it("has the real suite's size: 257 prompts, 32 pairs, ~4.5 KB and well over 100 lines of frontmatter, ~12 KB of body", () => {
    expect(prompts).toHaveLength(257);
    expect(pairs).toBe(32);
    expect(mean(frontmatters.map((f) => f.length))).toBeGreaterThan(115);
    expect(mean(frontmatters.map((f) => f.join("\n").length))).toBeGreaterThan(4300);
    const bodies = prompts.map((p, i) => realisticPromptFile(p).length - (frontmatters[i] as string[]).join("\n").length);
    expect(mean(bodies)).toBeGreaterThan(11_000);
  });

  it("writes, in every prompt, the YAML features real frontmatter uses", () => {
    for (const lines of frontmatters) {
      const text = lines.join("\n");
      expect(text).toMatch(/: &id\d+$/m); // an anchor
      expect(text).toMatch(/: \*id\d+$/m); // its aliases
      expect(text).toMatch(/^ {4}[a-z_]+:$/m); // a block map three levels deep
      expect(text).toMatch(/^ {2}- [a-z_]+: /m); // a block sequence of maps
      expect(text).toMatch(/^- /m); // an indentless block sequence
      expect(text).toMatch(/^description: [A-Z][^\n]+\n {2}[a-z][^:\n]*$/m); // a multi-line plain scalar
      expect(text).toMatch(/: '[^']*'$/m); // single-quoted
      expect(text).toMatch(/: "[^"]*"$/m); // double-quoted
      expect(text).toMatch(/: \[[^\]]+\]$/m); // a flow list
      expect(text).toMatch(/^notes: \|$/m); // a literal block scalar
    }
    expect(frontmatters.some((l) => l.includes("requires: []") || l.includes("related_prompts: []"))).toBe(true);
  });

  it("is read by the fast frontmatter parser as the yaml library reads it, for every prompt", () => {
    for (const lines of frontmatters) {
      const fast = parseSimpleFrontmatter(lines.join("\n"), 2);
      expect(fast).toBeDefined();
      const full = parseWithYaml(lines.join("\n"), "f.md");
      expect("data" in full && full.data).toEqual(fast?.data);
      expect("positions" in full && Object.fromEntries(full.positions)).toEqual(Object.fromEntries(fast?.positions ?? []));
    }
  });

  it("keeps the config at a repository root beside files that are not prompts, and validates clean with the declared pairs", () => {
    const dir = makeTempDir();
    const suite = generateRealSuite(path.join(dir, "repo"), 257);
    expect(readdirSync(suite.dir).sort()).toEqual(["CHANGELOG.md", "README.md", "docs", "prompts", "schemas", "twinlock.yaml"]);
    const report = validateSuite(loadSuite(suite.dir));
    expect(report.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(report.prompts).toBe(257);
    expect(report.genuinePairs).toBe(32);
  });
});

describe("the benchmark's ready handoff (the command, hook and adapters rows run on it)", () => {
  it("has a real handoff's shape: the files of examples/handoff, ready, with every kind of record in it", () => {
    const dir = path.join(makeTempDir(), "handoff");
    writeHandoff(dir, "MD-29");
    const example = path.join(import.meta.dirname, "..", "..", "examples", "handoff");
    expect(readdirSync(dir).sort()).toEqual(readdirSync(example).sort());
    const r = checkReadiness(dir);
    expect(r.problems).toEqual([]);
    expect(r.ready).toBe(true);
    for (const kind of ["evidence", "findings", "unknowns", "actions", "criteria"] as const) expect(r.counts[kind]).toBeGreaterThan(0);
  });
});
