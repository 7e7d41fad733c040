import { describe, expect, it } from "vitest";
import { plannerText } from "../test-support/prompt-builder.js";
import { parseSuiteConfig } from "./load-suite.js";
import { parsePromptFile } from "./parse-prompt-file.js";

/** YAML that YAML tools (PyYAML, this library in YAML 1.1 mode) or a person read differently from twinlock's YAML 1.2. */
const TRAPS: Array<[string, string, RegExp]> = [
  ["a %YAML 1.1 directive (merge keys and y/n booleans applied)", "%YAML 1.1\n--- # rules\n", /a YAML directive \(%YAML or %TAG\)/],
  ["a %TAG directive", "%TAG !e! tag:example.com,2000:\n--- # tags\n", /a YAML directive/],
  ["a document start marker with a comment", "--- # rules\n", /a YAML document marker/],
  ["a key tagged !!merge", "base: &b {x: 1}\n!!merge extra: *b\n", /a key tagged !!merge/],
  ["a << key", "base: &b {x: 1}\n<<: *b\n", /a merge key \("<<"\)/],
  ["an alias as a key", "note: &k dry_run_required\n*k : false\n", /a key given by an alias \(\*k\)/],
  ["a list as a key", "? [a, b]\n: 1\n", /a key that is a list or mapping/],
  ["an anchor named with a colon (&x:true false)", "flag: &x:true false\n", /an anchor or alias named "x:true"/],
  ["an alias named with a colon", "flag: &x true\nother: *x:y\n", /an anchor or alias named "x:y"/],
  [
    "a tag the library cannot apply (!!null APPLY_SAFE), whose text it keeps",
    "modes: [DRAFT_ONLY, !!null APPLY_SAFE]\n",
    /a tag or value other YAML tools read differently/,
  ],
  ["a key with spaces around its name", '"dry_run_required   ": true\n', /the key "dry_run_required {3}", with spaces around its name/],
];

describe("YAML read differently by other tools or a person is refused in frontmatter and twinlock.yaml", () => {
  it.each(TRAPS)("refuses %s in a prompt's frontmatter, where the trap starts", (_, yaml, message) => {
    const text = plannerText("MD-1", "MD-2").replace(/^---\n/, `---\n${yaml}`);
    const { prompt, diagnostics } = parsePromptFile("p.md", Buffer.from(text));
    expect(prompt).toBeUndefined();
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: "FRONTMATTER_YAML", file: "p.md" });
    expect(diagnostics[0]?.message).toMatch(message);
    expect(diagnostics[0]?.line).toBeGreaterThanOrEqual(2);
  });

  it.each(TRAPS)("refuses %s in twinlock.yaml", (_, yaml, message) => {
    const { config, diagnostics } = parseSuiteConfig(`${yaml}suite_id: s\n`);
    expect(config).toEqual({});
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: "CONFIG_INVALID" });
    expect(diagnostics[0]?.message).toMatch(message);
  });

  it("names the key given twice (dry_run_required: true, then false), in frontmatter and twinlock.yaml", () => {
    const text = plannerText("MD-1", "MD-2").replace(/^---\n/, "---\ndry_run_required: true\nnote: x\ndry_run_required: false\n");
    const { diagnostics } = parsePromptFile("p.md", Buffer.from(text));
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: "FRONTMATTER_YAML",
        line: 4,
        message: "the key `dry_run_required` is given twice in one mapping (YAML tools differ on which one counts); keep one",
      }),
    ]);
    const config = parseSuiteConfig("suite_id: s\nsuite_id: t\n");
    expect(config.diagnostics[0]?.message).toMatch(/the key `suite_id` is given twice in one mapping/);
  });

  it("reads the same YAML written plainly, with anchors and aliases as values", () => {
    const text = plannerText("MD-1", "MD-2").replace(/^---\n/, "---\nmedia: &m [a, b]\nmore: *m\n");
    const { prompt, diagnostics } = parsePromptFile("p.md", Buffer.from(text));
    expect(diagnostics).toEqual([]);
    expect(prompt?.frontmatter.more).toEqual(["a", "b"]);
  });
});
