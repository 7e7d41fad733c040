import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseWithYaml } from "./parse-prompt-file.js";
import { parseSimpleFrontmatter } from "./parse-simple-frontmatter.js";

const plainWords = [
  "MD-29",
  "investigative",
  "true",
  "false",
  "True",
  "null",
  "~",
  "NULL",
  "yes",
  "no",
  "007",
  "12",
  "-3",
  "1.5",
  "1e3",
  ".inf",
  "0x1F",
  "0o7",
  "a: b",
  "a #b",
  "x:",
  "hello world",
  "review_revise_refreeze_rereview_then_consent",
  "@x",
  "!tag",
  "&anchor",
  "*alias",
  "[A]",
  "{a: 1}",
  "|",
  ">",
  "%x",
  "`x`",
  "C:\\path",
  "ünïcode",
  "a,b",
  "'single'",
  "'it''s'",
  "'bad'quote'",
  '"double"',
  '"esc \\n \\u0041"',
  '"bad \\x41"',
  '"say \\"hi\\" twice"',
  '"ends in a backslash \\\\"',
  '"a \\\\" b"',
  "'two '''' quotes'",
  '"open',
  "plain  ",
  "-",
  "--",
  "- x",
  "?",
];
const scalarText = fc.oneof(
  fc.constantFrom(...plainWords),
  fc.string({ maxLength: 12 }).filter((s) => !s.includes("\n") && !s.includes("\r")),
);
const key = fc.constantFrom(
  "prompt_id",
  "title",
  "requires",
  "related_prompts",
  "pairing_required",
  "x-key",
  "_k",
  "bad key",
  "a:b",
  "paired_prompt_id",
);

const line = fc.oneof(
  fc.tuple(key, scalarText).map(([k, v]) => [`${k}: ${v}`]),
  fc.tuple(key, fc.array(scalarText, { maxLength: 4 })).map(([k, vs]) => [`${k}: [${vs.join(", ")}]`]),
  fc
    .tuple(key, fc.array(scalarText, { minLength: 0, maxLength: 3 }), fc.constantFrom("  ", "    "))
    .map(([k, vs, ind]) => [`${k}:`, ...vs.map((v) => `${ind}- ${v}`)]),
  fc.constantFrom(["# comment"], [""], ["  nested: 1"], ["key:value"], ["\tx: 1"], ["k: a # trailing"]),
);

describe("the fast frontmatter parser", () => {
  it("gives exactly what the yaml library gives (values and positions) whenever it accepts the input", () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), (chunks) => {
        const lines = chunks.flat();
        const simple = parseSimpleFrontmatter(lines.join("\n"), 2);
        if (simple === undefined) return;
        accepted++;
        const full = parseWithYaml(lines.join("\n"), "f.md");
        expect("diagnostics" in full ? full.diagnostics : []).toEqual([]);
        if ("diagnostics" in full) return;
        expect(simple.data).toEqual(full.data);
        expect(Object.fromEntries(simple.positions)).toEqual(Object.fromEntries(full.positions));
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 3000) },
    );
    expect(accepted).toBeGreaterThan(100);
  });

  it("accepts a canonical planner's frontmatter", () => {
    const lines = [
      "prompt_id: MD-29",
      'title: "Debugging planner"',
      "pairing_required: true",
      "paired_prompt_id: MD-30",
      "requires: [MD-01]",
      "allowed_modes:",
      "  - AUDIT_ONLY",
      "  - PLAN_ONLY",
    ];
    const r = parseSimpleFrontmatter(lines.join("\n"), 2);
    expect(r?.data).toEqual({
      prompt_id: "MD-29",
      title: "Debugging planner",
      pairing_required: true,
      paired_prompt_id: "MD-30",
      requires: ["MD-01"],
      allowed_modes: ["AUDIT_ONLY", "PLAN_ONLY"],
    });
    expect(r?.positions.get("requires[0]")).toEqual({ line: 6, col: 12 });
    expect(r?.positions.get("allowed_modes[1]")).toEqual({ line: 9, col: 5 });
  });

  it("declines tags, flow maps, complex keys, tabs, duplicate keys and an empty document, leaving them to the full parser", () => {
    expect(parseSimpleFrontmatter("a: !tag 1", 2)).toBeUndefined();
    expect(parseSimpleFrontmatter("routing: {executor: MD-28}", 2)).toBeUndefined();
    expect(parseSimpleFrontmatter("? a\n: b", 2)).toBeUndefined();
    expect(parseSimpleFrontmatter("a:\n\t- x", 2)).toBeUndefined();
    expect(parseSimpleFrontmatter("a: 1\na: 2", 2)).toBeUndefined();
    expect(parseSimpleFrontmatter("a: &x [1]\nb: &y\n  - *x", 2)).toBeUndefined();
    expect(parseSimpleFrontmatter("", 2)).toBeUndefined();
  });

  it("reads anchors and aliases, nested maps, indentless sequences of maps and folded scalars as the yaml library does", () => {
    const lines = [
      "outputs:",
      "  files:",
      "  - path: a.json",
      "    media: &id001",
      "    - application/json",
      "  - path: b.json",
      "    media: *id001",
      "description: first line",
      "  second line",
      "",
      "  after a blank",
      "quoted: 'it''s",
      "  folded'",
      "notes: |",
      "  kept",
      "  as is",
    ];
    const r = parseSimpleFrontmatter(lines.join("\n"), 2);
    expect(r?.data).toEqual({
      outputs: {
        files: [
          { path: "a.json", media: ["application/json"] },
          { path: "b.json", media: ["application/json"] },
        ],
      },
      description: "first line second line\nafter a blank",
      quoted: "it's folded",
      notes: "kept\nas is\n",
    });
    const full = parseWithYaml(lines.join("\n"), "f.md");
    expect("data" in full && full.data).toEqual(r?.data);
    expect("positions" in full && Object.fromEntries(full.positions)).toEqual(Object.fromEntries(r?.positions ?? []));
  });
});
