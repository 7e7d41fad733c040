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

describe("compileGlob on whole paths", () => {
  // The glob's meaning, segment by segment and by plain recursion: exponential, fine for paths this short.
  const reference = (glob: readonly string[], rel: readonly string[]): boolean => {
    if (glob.length === 0) return rel.length === 0;
    const [head, ...rest] = glob as [string, ...string[]];
    if (head === "**") return reference(rest, rel) || (rel.length > 0 && reference(glob, rel.slice(1)));
    return rel.length > 0 && compileGlob(head).matches(rel[0] as string) && reference(rest, rel.slice(1));
  };
  const glob = fc.array(fc.constantFrom("**", "a", "b", "*", "a*", "?", "*.md"), { minLength: 1, maxLength: 5 });
  const rel = fc.array(fc.constantFrom("a", "b", "ab", "x.md", "a.md", ""), { minLength: 1, maxLength: 5 });

  it("matches a path exactly when the glob's segments, with `**` as any number of folders, do", () => {
    fc.assert(
      fc.property(glob, rel, (g, r) => {
        expect(compileGlob(g.join("/")).matches(r.join("/"))).toBe(reference(g, r));
      }),
      { numRuns: 2000 },
    );
  });

  it("gives the same answer for a name in a folder matched once as for the whole path", () => {
    fc.assert(
      fc.property(glob, rel, (g, r) => {
        const compiled = compileGlob(g.join("/"));
        const folders = r.slice(0, -1);
        expect(compiled.matchesIn(compiled.statesAfter(folders), r.at(-1) as string)).toBe(compiled.matches(r.join("/")));
      }),
      { numRuns: 500 },
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

  it("answers for the names in a folder as it does for their paths", () => {
    const s = promptSelection({ prompts: ["prompts/**/*.md", "*.md"], exclude: ["prompts/**/drafts/**", "README.md"] });
    const paths = ["a.md", "README.md", "prompts/a.md", "prompts/x/drafts/b.md", "prompts/x/b.md", "docs/c.md", "prompts/c.txt"];
    for (const rel of paths) {
      const slash = rel.lastIndexOf("/");
      expect(s.within(slash === -1 ? "" : rel.slice(0, slash))(rel.slice(slash + 1)), rel).toBe(s.includes(rel));
    }
    expect(paths.filter((rel) => s.includes(rel))).toEqual(["a.md", "prompts/a.md", "prompts/x/b.md"]);
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
