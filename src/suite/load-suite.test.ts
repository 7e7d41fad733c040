import { chmodSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import { BASE_FILES, baseSuite, lineOf, plannerText } from "../test-support/prompt-builder.js";
import {
  EXAMPLE_SUITE,
  makeOverlongFile,
  makeOverlongFolder,
  makeTempDir,
  removeTempDirs,
  runningAsRoot,
  writeSuite,
} from "../test-support/temp-suite.js";
import { loadSuite, loadSuiteConfig } from "./load-suite.js";

afterAll(removeTempDirs);

const codesOf = (root: string) => loadSuite(root).diagnostics.map((d) => `${d.file}:${d.line}:${d.col} ${d.code}`);

describe("loadSuite", () => {
  it("keeps choosing prompt files by valid prompts/exclude globs when another key of twinlock.yaml is invalid", () => {
    const files: Record<string, string> = { "README.md": "# Not a prompt\n", "docs/guide.md": "no frontmatter\n" };
    for (const [file, text] of Object.entries(baseSuite())) if (file !== "twinlock.yaml") files[`prompts/${file}`] = text;
    files["twinlock.yaml"] = 'suite_id: s\nprompts: ["prompts/**/*.md"]\npolicies:\n  handoff: {format: mission-directives}\n';
    const suite = loadSuite(writeSuite(files));
    expect(suite.diagnostics.map((d) => `${d.file} ${d.code}`)).toEqual(["twinlock.yaml CONFIG_INVALID"]);
    expect(suite.prompts.every((p) => p.file.startsWith("prompts/"))).toBe(true);
  });

  it("chooses prompt files by a config the caller already read and hashed, never by twinlock.yaml read again", () => {
    const files: Record<string, string> = { "README.md": "# Not a prompt\n" };
    for (const [file, text] of Object.entries(baseSuite())) if (file !== "twinlock.yaml") files[`prompts/${file}`] = text;
    // What the file says now (all *.md, README too) is not what the caller pinned.
    files["twinlock.yaml"] = "suite_id: s\n";
    const root = writeSuite(files);
    const suite = loadSuite(root, { config: { suite_id: "s", prompts: ["prompts/**/*.md"] } });
    expect(suite.config).toEqual({ suite_id: "s", prompts: ["prompts/**/*.md"] });
    expect(suite.diagnostics).toEqual([]);
    expect(loadSuite(root).diagnostics.map((d) => `${d.file} ${d.code}`)).toEqual(["README.md FRONTMATTER_MISSING"]);
  });

  it("loads all 16 prompts of the example suite and its config without a problem", () => {
    const suite = loadSuite(EXAMPLE_SUITE);
    expect(suite.diagnostics).toEqual([]);
    expect(suite.prompts).toHaveLength(16);
    expect(suite.config).toMatchObject({ suite_id: "example-engineering", declared_pairs: 6 });
    expect(suite.byId.get("MD-29")?.file).toBe("debugging/md-29-debugging-planner.md");
  });

  it("reads *.md files recursively, sorted by path, and skips dot-folders, node_modules and other files", () => {
    const root = writeSuite({
      ...baseSuite(),
      ".hidden/md-50.md": plannerText("MD-50", "MD-51"),
      "node_modules/pkg/md-51.md": plannerText("MD-51", "MD-50"),
      "notes.txt": "not a prompt",
      "README.markdown": "# not a prompt",
    });
    const suite = loadSuite(root);
    expect(suite.prompts.map((p) => p.file)).toEqual(Object.values(BASE_FILES).sort());
    expect(suite.diagnostics).toEqual([]);
  });

  it("names both files in the message of each duplicated ID, at each prompt_id line", () => {
    const root = writeSuite({ ...baseSuite(), "zz/md-10-again.md": plannerText("MD-10", "MD-11") });
    const suite = loadSuite(root);
    const dups = suite.diagnostics.filter((d) => d.code === "PROMPT_ID_DUPLICATE");
    expect(dups.map((d) => [d.file, d.line])).toEqual([
      [BASE_FILES["MD-10"], 2],
      ["zz/md-10-again.md", 2],
    ]);
    for (const d of dups) {
      expect(d.message).toContain(BASE_FILES["MD-10"]);
      expect(d.message).toContain("zz/md-10-again.md");
    }
    expect(suite.byId.get("MD-10")?.file).toBe(BASE_FILES["MD-10"]);
    expect(suite.duplicates.get("MD-10")).toHaveLength(2);
  });

  it("reports a symlink loop (`ln -s . loop`) as an error (another tool may follow it) and does not follow it", () => {
    const root = writeSuite(baseSuite());
    symlinkSync(".", path.join(root, "loop"));
    symlinkSync("..", path.join(root, "pairs", "up"));
    const suite = loadSuite(root);
    expect(suite.prompts).toHaveLength(6);
    expect(suite.diagnostics.map((d) => [d.code, d.severity, d.file])).toEqual([
      ["SUITE_SYMLINK_SKIPPED", "error", "loop"],
      ["SUITE_SYMLINK_SKIPPED", "error", "pairs/up"],
    ]);
  });

  it("does not read a prompt file reached through a symlink", () => {
    const outside = writeSuite({ "md-60.md": plannerText("MD-60", "MD-61") });
    const root = writeSuite(baseSuite());
    symlinkSync(path.join(outside, "md-60.md"), path.join(root, "md-60.md"));
    const suite = loadSuite(root);
    expect(suite.byId.has("MD-60")).toBe(false);
    expect(codesOf(root)).toEqual(["md-60.md:1:1 SUITE_SYMLINK_SKIPPED"]);
  });

  it("reports a 10 MB file as FILE_TOO_LARGE without parsing it", () => {
    const root = writeSuite(baseSuite());
    const huge = path.join(root, "huge.md");
    writeFileSync(huge, "");
    truncateSync(huge, 10 * 1024 * 1024); // ten million NUL bytes: parsing would report FILE_NUL_BYTE
    const started = performance.now();
    expect(codesOf(root)).toEqual(["huge.md:1:1 FILE_TOO_LARGE"]);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(loadSuite(root).diagnostics[0]?.message).toContain("10485760 bytes");
  });

  it("reports a file that cannot be opened as FILE_UNREADABLE and loads the rest (path over PATH_MAX, which stops root too)", () => {
    const root = writeSuite(baseSuite());
    const rel = makeOverlongFile(root);
    const suite = loadSuite(root);
    expect(suite.diagnostics.map((d) => [d.code, d.file, d.line])).toEqual([["FILE_UNREADABLE", rel, 1]]);
    expect(suite.diagnostics[0]?.message).toContain("ENAMETOOLONG");
    expect(suite.prompts).toHaveLength(6);
  });

  it("reports a folder that cannot be listed as FILE_UNREADABLE and loads the rest", () => {
    const root = writeSuite(baseSuite());
    const chain = makeOverlongFolder(root);
    const suite = loadSuite(root);
    const d = suite.diagnostics.find((x) => x.code === "FILE_UNREADABLE");
    expect(d?.message).toContain("cannot read folder");
    expect(chain.startsWith(d?.file ?? "\0")).toBe(true);
    expect(suite.prompts).toHaveLength(6);
  });

  it("reports a file without read permission as FILE_UNREADABLE", (ctx) => {
    ctx.skip(runningAsRoot(), "running as root: chmod 000 does not stop root from reading (the PATH_MAX test above covers root)");
    const root = writeSuite(baseSuite());
    chmodSync(path.join(root, BASE_FILES["MD-20"]), 0o000);
    expect(codesOf(root)).toEqual([`${BASE_FILES["MD-20"]}:1:1 FILE_UNREADABLE`]);
  });

  it("refuses an empty folder with one UsageError that says what to do", () => {
    const root = makeTempDir();
    expect(() => loadSuite(root)).toThrow(UsageError);
    expect(() => loadSuite(root)).toThrow(/no \*\.md prompt files under .*; point --suite at the folder that holds the prompts/);
  });

  it("refuses a folder that holds only twinlock.yaml", () => {
    expect(() => loadSuite(writeSuite({ "twinlock.yaml": "declared_pairs: 0\n" }))).toThrow(UsageError);
  });

  it("refuses a folder that does not exist with a UsageError keeping the cause", () => {
    try {
      loadSuite("/no/such/suite/folder");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain("ENOENT");
      expect((error as Error).cause).toBeDefined();
    }
  });
});

describe("loadSuiteConfig (twinlock.yaml is ours: unknown keys are errors)", () => {
  const config = (text: string) => loadSuiteConfig(writeSuite({ "twinlock.yaml": text }));
  const where = (text: string) => config(text).diagnostics.map((d) => [d.code, d.file, d.line, d.col]);

  it("treats a missing twinlock.yaml as an empty config", () => {
    expect(loadSuiteConfig(makeTempDir())).toEqual({ config: {}, diagnostics: [] });
  });

  it("treats an empty twinlock.yaml as an empty config", () => {
    expect(config("# nothing yet\n")).toEqual({ config: {}, diagnostics: [] });
  });

  it("reads every key of SPEC §8", () => {
    const text = [
      "suite_id: s1",
      "declared_pairs: 3",
      "graph_file: graph.json",
      "body_rules:",
      "  gate_phrases: [user review]",
      "policies:",
      "  consent_expiry: 4h",
      "  separate_duties: true",
      "revoked: []",
      "",
    ].join("\n");
    expect(config(text)).toEqual({
      config: {
        suite_id: "s1",
        declared_pairs: 3,
        graph_file: "graph.json",
        body_rules: { gate_phrases: ["user review"] },
        policies: { consent_expiry: "4h", separate_duties: true },
        revoked: [],
      },
      diagnostics: [],
    });
  });

  it("reports an unknown top-level key at that key's line and column", () => {
    const text = "suite_id: s1\ndeclared_pairs: 2\nowner: platform\n";
    expect(where(text)).toEqual([["CONFIG_INVALID", "twinlock.yaml", lineOf(text, "owner:"), 1]]);
    expect(config(text).diagnostics[0]?.message).toContain("`owner`");
  });

  it("reports an unknown nested key at that key's line", () => {
    const text = "suite_id: s1\npolicies:\n  consent_expiry: 4h\n  allow_self_review: true\n";
    expect(where(text)).toEqual([["CONFIG_INVALID", "twinlock.yaml", 4, 3]]);
    expect(config(text).diagnostics[0]?.message).toContain("policies.allow_self_review");
  });

  it("reports a value of the wrong type at the value's line", () => {
    const text = "suite_id: s1\ndeclared_pairs: six\n";
    expect(where(text)).toEqual([["CONFIG_INVALID", "twinlock.yaml", 2, 17]]);
    // The rest is not read; a valid suite_id still names the suite in reports.
    expect(config(text).config).toEqual({ suite_id: "s1" });
  });

  it("names the key a misspelt one meant, and keeps the suite_id", () => {
    const text = 'suite_id: s1\npromts: ["prompts/**/*.md"]\n';
    const c = config(text);
    expect(c.diagnostics[0]?.message).toMatch(/^promts: unknown key `promts` \(did you mean `prompts`\?\): twinlock\.yaml accepts only /);
    expect(c.config).toEqual({ suite_id: "s1" });
  });

  it("reports malformed YAML in the config at its line", () => {
    expect(where("suite_id: s1\ndeclared_pairs: [2\n")[0]?.[0]).toBe("CONFIG_INVALID");
  });

  it("reports a config that is a list, not a mapping", () => {
    expect(where("- a\n- b\n").map((x) => x[0])).toEqual(["CONFIG_INVALID"]);
  });

  it("reports a config with a NUL byte or non-UTF-8 bytes without throwing", () => {
    const root = makeTempDir();
    writeFileSync(path.join(root, "twinlock.yaml"), Buffer.from([0x73, 0x3a, 0x20, 0xff, 0x00, 0x0a]));
    expect(loadSuiteConfig(root).diagnostics.map((d) => d.code)).toEqual(["CONFIG_INVALID"]);
  });
});

describe("loadSuite and file names", () => {
  it("keeps POSIX relative paths for nested prompts", () => {
    const root = writeSuite({ ...baseSuite(), "a/b/c/md-70.md": "---\nprompt_id: MD-70\n---\n" });
    mkdirSync(path.join(root, "empty-folder"));
    expect(loadSuite(root).byId.get("MD-70")?.file).toBe("a/b/c/md-70.md");
  });
});
