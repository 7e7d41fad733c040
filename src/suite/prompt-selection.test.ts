import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../test-support/run-cli.js";
import { copyExampleSuite, makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { compileGlob, promptSelection } from "./prompt-selection.js";

afterAll(removeTempDirs);

describe("compileGlob", () => {
  it.each([
    ["prompts/**/*.md", "prompts/a.md", true],
    ["prompts/**/*.md", "prompts/x/y/a.md", true],
    ["prompts/**/*.md", "docs/a.md", false],
    ["prompts/**/*.md", "prompts/a.txt", false],
    ["*.md", "README.md", true],
    ["*.md", "docs/a.md", false],
    ["docs/**", "docs/a/b.md", true],
    ["MD-?.md", "MD-1.md", true],
    ["a.b.md", "aXb.md", false],
    ["*.md", ".md", true],
    ["*.md", "a.md.txt", false],
    ["*", "anything", true],
    ["prompts", "prompts", true],
    ["prompts", "prompt", false],
    ["prompts/**/drafts/**", "prompts/x/drafts/a.md", true],
    ["prompts/**/drafts/**", "prompts/x/draft/a.md", false],
  ])("%s against %s is %s", (glob, rel, expected) => {
    expect(compileGlob(glob).matches(rel)).toBe(expected);
  });
});

describe("compileGlob against a reference", () => {
  // One name against one glob segment, as an anchored regular expression: fine for inputs this short.
  const reference = (glob: string, name: string): boolean =>
    new RegExp(`^${glob.replace(/\./g, "\\.").replace(/\*/g, ".*").replace(/\?/g, ".")}$`).test(name);
  const segment = fc.stringMatching(/^[ab.*?]{1,5}$/);
  const name = fc.stringMatching(/^[ab.]{1,5}$/);

  it("matches a name exactly when a regular expression of the glob does", () => {
    fc.assert(
      fc.property(segment, name, (glob, rel) => {
        expect(compileGlob(glob).matches(rel)).toBe(reference(glob, rel));
      }),
    );
  });
});

describe("glob matching cost", () => {
  it("matches hostile globs against long paths at once, where a backtracking regex would crawl", () => {
    const deep = Array.from({ length: 30 }, () => "x".repeat(100)).join("/");
    expect(compileGlob("**x**x**x**y").matches(deep)).toBe(false);
    expect(compileGlob("*a*a*a*a*a*a*a*b").matches("a".repeat(200))).toBe(false);
    expect(compileGlob("a/**/**/**/b.md").matches("a/x/y/b.md")).toBe(true);
    expect(compileGlob("**/*.md").matches("a.md")).toBe(true);
  });
});

describe("promptSelection", () => {
  it("takes every *.md when no prompts globs are given, minus the excluded ones", () => {
    const s = promptSelection({ exclude: ["docs/**", "README.md"] });
    expect(["a.md", "x/b.md", "README.md", "docs/c.md", "x/c.txt"].filter((f) => s.includes(f))).toEqual(["a.md", "x/b.md"]);
    expect(s.mayContain("docs")).toBe(false);
  });

  it("goes only into folders a prompts glob can match", () => {
    const s = promptSelection({ prompts: ["prompts/**/*.md"] });
    expect(s.mayContain("prompts")).toBe(true);
    expect(s.mayContain("prompts/debugging")).toBe(true);
    expect(s.mayContain("docs")).toBe(false);
  });
});

describe("a suite whose twinlock.yaml sits at a repository root", () => {
  /** A repository: README, docs and a FIFO outside the prompts, the example suite under prompts/. */
  function repository(): string {
    const repo = makeTempDir("twinlock-repo-");
    renameSync(copyExampleSuite(), path.join(repo, "prompts"));
    const config = readFileSync(path.join(repo, "prompts", "twinlock.yaml"), "utf8")
      .replace("graph_file: capability-graph.json", "graph_file: prompts/capability-graph.json")
      .concat('prompts: ["prompts/**/*.md"]\nexclude: ["prompts/drafts/**"]\n');
    writeFileSync(path.join(repo, "twinlock.yaml"), config);
    writeFileSync(path.join(repo, "README.md"), "# A repository\n\nNo frontmatter here.\n");
    mkdirSync(path.join(repo, "docs"));
    writeFileSync(path.join(repo, "docs", "guide.md"), "# Guide\n");
    // Opening a FIFO would hang the reader: it proves files outside the globs are never opened.
    execFileSync("mkfifo", [path.join(repo, "docs", "never-read.md")]);
    mkdirSync(path.join(repo, "prompts", "drafts"));
    writeFileSync(path.join(repo, "prompts", "drafts", "wip.md"), "not a prompt yet\n");
    return repo;
  }

  it("validates clean while README, docs and excluded drafts are never read", async () => {
    const repo = repository();
    const graph = await runCli(["graph", "--suite", repo, "--out", path.join(repo, "prompts", "capability-graph.json")]);
    expect(graph.code).toBe(0);
    const r = await runCli(["validate", "--suite", repo]);
    expect(r.stdout).toContain("prompts    16 (6 investigative, 7 executive, 1 operational, 1 gate, 1 control)");
    expect(r.stdout).toContain("problems   0, warnings 0");
    expect(r.code).toBe(0);
  });

  it("says which globs matched nothing", async () => {
    const repo = repository();
    writeFileSync(
      path.join(repo, "twinlock.yaml"),
      readFileSync(path.join(repo, "twinlock.yaml"), "utf8").replace('prompts: ["prompts/**/*.md"]', 'prompts: ["src/**/*.md"]'),
    );
    const r = await runCli(["validate", "--suite", repo]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no prompt files under .* match twinlock\.yaml prompts \(src\/\*\*\/\*\.md\); fix the globs/);
  });

  it("new-pair scaffolds under the prompts glob by default, and refuses a --dir outside the globs", async () => {
    const repo = repository();
    const args = [
      "new-pair",
      "--suite",
      repo,
      "--planner",
      "MD-41",
      "--executor",
      "MD-42",
      "--planner-title",
      "P",
      "--executor-title",
      "E",
      "--category",
      "deployment",
    ];
    const outside = await runCli([...args, "--dir", "deployment"]);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(
      /deployment\/md-41-p\.md would not be read as a prompt: twinlock\.yaml prompts are prompts\/\*\*\/\*\.md minus prompts\/drafts\/\*\*; pass --dir inside them/,
    );
    const inside = await runCli(args);
    expect(inside.code, inside.output).toBe(0);
    expect(inside.stdout).toContain("prompts/deployment/");
  });
});
