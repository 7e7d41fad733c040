import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lineOf, plannerText, unpairedText } from "../test-support/prompt-builder.js";
import { MAX_PROMPT_BYTES, misspeltRule, misspeltRuleKey, parsePromptFile } from "./parse-prompt-file.js";

const parse = (text: string | Uint8Array, file = "p.md") =>
  parsePromptFile(file, typeof text === "string" ? new TextEncoder().encode(text) : text);
const codes = (text: string | Uint8Array) => parse(text).diagnostics.map((d) => [d.code, d.line, d.col]);

describe("parsePromptFile on a good file", () => {
  const text = plannerText("MD-29", "MD-30", { frontmatter: { owner_team: "platform", contract_refs: ["runtime-markers"] } });
  const { prompt, diagnostics } = parse(text, "debugging/md-29.md");

  it("reads the typed fields of a paired planner", () => {
    expect(diagnostics).toEqual([]);
    expect(prompt).toMatchObject({
      file: "debugging/md-29.md",
      id: "MD-29",
      title: "Planner MD-29",
      role: "investigative",
      pairingRequired: true,
      pairedPromptId: "MD-30",
      requires: ["MD-01"],
      relatedPrompts: [],
      defaultMode: "PLAN_ONLY",
      allowedModes: ["AUDIT_ONLY", "PLAN_ONLY"],
    });
  });

  it("keeps unknown keys untouched in the frontmatter", () => {
    expect(prompt?.frontmatter.owner_team).toBe("platform");
    expect(prompt?.frontmatter.contract_refs).toEqual(["runtime-markers"]);
  });

  it("records the line of every top-level key", () => {
    for (const key of ["prompt_id", "exact_twin_only", "review_cycle", "owner_team"]) {
      expect(prompt?.positions.get(key), key).toEqual({ line: lineOf(text, `${key}:`), col: 1 });
    }
  });

  it("records where the body starts and keeps the body's text", () => {
    expect(prompt?.bodyLine).toBe(text.split("\n").indexOf("---", 1) + 2);
    expect(prompt?.body).toContain("<plan_review_and_execution_gate>");
    expect(prompt?.body).not.toContain("prompt_id:");
  });

  it("reads `paired_prompt_id: null` as unpaired", () => {
    expect(parse(unpairedText("MD-01", "control")).prompt?.pairedPromptId).toBeNull();
  });

  it("accepts CRLF line endings and a UTF-8 byte-order mark, with the same positions", () => {
    const crlf = parse(`\uFEFF${text.replace(/\n/g, "\r\n")}`);
    expect(crlf.diagnostics).toEqual([]);
    expect(crlf.prompt?.positions.get("exact_twin_only")).toEqual({ line: lineOf(text, "exact_twin_only:"), col: 1 });
    expect(crlf.prompt?.id).toBe("MD-29");
  });

  it("accepts a closing `---` with trailing spaces", () => {
    expect(parse("---\nprompt_id: MD-1\n---   \nbody\n").prompt?.id).toBe("MD-1");
  });
});

describe("parsePromptFile on bad input never throws and locates the problem", () => {
  it("reports a file with no frontmatter at line 1", () => {
    expect(codes("# Title\n\ntext\n")).toEqual([["FRONTMATTER_MISSING", 1, 1]]);
    expect(codes("")).toEqual([["FRONTMATTER_MISSING", 1, 1]]);
  });

  it("reports frontmatter that is never closed", () => {
    expect(codes("---\nprompt_id: MD-1\ntitle: x\n")).toEqual([["FRONTMATTER_UNCLOSED", 1, 1]]);
  });

  it("reports malformed YAML at the line of the error", () => {
    expect(codes("---\nprompt_id: MD-1\ntitle: a: b\n---\n")).toEqual([["FRONTMATTER_YAML", 3, 8]]);
    expect(codes("---\nprompt_id: MD-1\ntitle: x\ntitle: y\n---\n")).toEqual([["FRONTMATTER_YAML", 4, 1]]);
    expect(codes("---\nprompt_id: MD-1\n\ttitle: x\n---\n")).toEqual([["FRONTMATTER_YAML", 3, 1]]);
  });

  it("reports frontmatter that is a list, a scalar or empty as not a mapping", () => {
    expect(codes("---\n- a\n- b\n---\n")).toEqual([["FRONTMATTER_NOT_MAPPING", 2, 1]]);
    expect(codes("---\njust a sentence\n---\n")).toEqual([["FRONTMATTER_NOT_MAPPING", 2, 1]]);
    expect(codes("---\n---\nbody\n")).toEqual([["FRONTMATTER_NOT_MAPPING", 2, 1]]);
  });

  it("reports a missing prompt_id and a malformed one", () => {
    expect(codes("---\ntitle: x\n---\n")).toEqual([["PROMPT_ID_MISSING", 2, 1]]);
    expect(codes("---\ntitle: x\nprompt_id: md-29\n---\n")).toEqual([["PROMPT_ID_FORMAT", 3, 1]]);
    expect(codes("---\nprompt_id: 29\n---\n")).toEqual([["PROMPT_ID_FORMAT", 2, 1]]);
    expect(codes("---\nprompt_id: [MD-29]\n---\n")).toEqual([["PROMPT_ID_FORMAT", 2, 1]]);
  });

  it("reports fields of the wrong type at their key and reads them as absent", () => {
    const r = parse('---\nprompt_id: MD-1\ntitle: [a]\npairing_required: "yes"\nrequires: MD-2\n---\n');
    expect(r.diagnostics.map((d) => [d.code, d.line, d.field]).sort((a, b) => (a[1] as number) - (b[1] as number))).toEqual([
      ["FIELD_TYPE", 3, "title"],
      ["FIELD_TYPE", 4, "pairing_required"],
      ["FIELD_TYPE", 5, "requires"],
    ]);
    expect(r.prompt).toMatchObject({ title: undefined, pairingRequired: false, requires: [] });
  });

  it("reports an unknown role and an unknown mode at their key", () => {
    const r = parse("---\nprompt_id: MD-1\nprompt_role: wizard\ndefault_mode: YOLO\nallowed_modes: [PLAN_ONLY, NOPE]\n---\n");
    expect(r.diagnostics.map((d) => [d.code, d.line, d.field])).toEqual([
      ["FIELD_VALUE", 3, "prompt_role"],
      ["FIELD_VALUE", 4, "default_mode"],
      ["FIELD_VALUE", 5, "allowed_modes"],
    ]);
    expect(r.prompt?.allowedModes).toEqual(["PLAN_ONLY"]);
  });

  it("tags every diagnostic of a file with a prompt ID with that ID", () => {
    const r = parse("---\nprompt_id: MD-1\nprompt_role: wizard\n---\n");
    expect(r.diagnostics.every((d) => d.promptId === "MD-1")).toBe(true);
  });

  it("reports a NUL byte at its line and column", () => {
    const bytes = Buffer.concat([Buffer.from("---\nprompt_id: MD-1\n---\nab"), Buffer.from([0]), Buffer.from("\n")]);
    expect(codes(bytes)).toEqual([["FILE_NUL_BYTE", 4, 3]]);
  });

  it("reports bytes that are not UTF-8 at their line", () => {
    const bytes = Buffer.concat([Buffer.from("---\nprompt_id: MD-1\ntitle: "), Buffer.from([0xc3, 0x28]), Buffer.from("\n---\n")]);
    expect(codes(bytes)).toEqual([["FILE_NOT_UTF8", 3, 8]]);
  });

  it("reads a prompt of exactly its byte limit's order of size without trouble", () => {
    const body = "x".repeat(MAX_PROMPT_BYTES - 100);
    expect(parse(`---\nprompt_id: MD-1\n---\n${body}`).prompt?.id).toBe("MD-1");
  });

  it("neither runs nor reads a YAML custom tag (!!js/function): the prompt is refused, as other tools would read it otherwise", () => {
    const r = parse("---\nprompt_id: MD-1\ntitle: !!js/function 'function(){}'\n---\n");
    expect(r.prompt).toBeUndefined();
    expect(r.diagnostics).toEqual([expect.objectContaining({ code: "FRONTMATTER_YAML", line: 3 })]);
    expect(r.diagnostics[0]?.message).toMatch(/a tag or value other YAML tools read differently/);
  });

  // A literal U+FFFD earlier in the file must not be taken for the decoding
  // error: the problem is located at the first invalid byte.
  it("reports bytes that are not UTF-8 at their own line even when a literal U+FFFD comes earlier", () => {
    const bytes = Buffer.concat([
      Buffer.from("---\nprompt_id: MD-1\ntitle: \uFFFD\n---\nline 5\n"),
      Buffer.from([0xff]),
      Buffer.from("\n"),
    ]);
    expect(codes(bytes)).toEqual([["FILE_NOT_UTF8", 6, 1]]);
  });

  // An alias bomb ("billion laughs") makes yaml's toJS throw; it must come
  // back as a located problem, keeping the "never throws on bad input" contract.
  it("reports an alias bomb in the frontmatter as a located problem instead of throwing", () => {
    const bomb = [
      "---",
      "prompt_id: MD-1",
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
      "---",
      "",
    ].join("\n");
    let result: ReturnType<typeof parse> | undefined;
    expect(() => {
      result = parse(bomb);
    }).not.toThrow();
    expect(result?.diagnostics[0]?.code).toBe("FRONTMATTER_YAML");
    const d = result?.diagnostics[0];
    expect(d).toMatchObject({ severity: "error", file: "p.md" });
    // Somewhere inside the frontmatter (lines 2–7), not the 1:1 fallback.
    expect(d?.line).toBeGreaterThanOrEqual(2);
    expect(d?.line).toBeLessThanOrEqual(7);
  });
});

describe("a parsed prompt's sha256 and source are of the bytes it was parsed from", () => {
  const digestOf = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

  it("is the sha256 of the exact bytes, with or without a parse cache, for any valid UTF-8 body and byte-order marks", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.integer({ min: 0, max: 2 }), fc.boolean(), (body, boms, crlf) => {
        let text = `${"\uFEFF".repeat(boms)}${plannerText("MD-1", "MD-2")}\n${body}`;
        if (crlf) text = text.replace(/\n/g, "\r\n");
        const bytes = Buffer.from(text, "utf8");
        for (const cache of [undefined, memoryCache()]) {
          const { prompt } = parsePromptFile("p.md", bytes, cache);
          if (!prompt) return; // a body with hidden text may make the file refused; nothing then is bound
          expect(prompt.sha256).toBe(digestOf(bytes));
          expect(Buffer.from(prompt.source, "utf8").equals(bytes)).toBe(true);
        }
      }),
    );
  });

  it("keeps the digest of the parse when the file's bytes later change (nothing is read again)", () => {
    const bytes = Buffer.from(plannerText("MD-1", "MD-2"), "utf8");
    const { prompt } = parsePromptFile("p.md", bytes);
    const before = digestOf(bytes);
    bytes.write("X", bytes.length - 1);
    expect(prompt?.sha256).toBe(before);
  });
});

function memoryCache() {
  const known = new Map<string, Record<string, unknown>>();
  return { get: (d: string) => known.get(d), set: (d: string, data: Record<string, unknown>) => void known.set(d, data) };
}

describe("a key one slip from a rule key is reported, as the rule would be ignored", () => {
  const rules = ["dry_run_required", "allowed_modes", "paired_prompt_id", "pairing_required", "prompt_role", "prompt_id"];

  it("never reports a rule key itself, and reports any one-letter slip of one (dropped, doubled, swapped or another case)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...rules), fc.nat(), fc.constantFrom("drop", "double", "case", "swap"), (rule, at, slip) => {
        expect(misspeltRuleKey(rule)).toBeUndefined();
        const i = at % (rule.length - 1);
        const typo =
          slip === "drop"
            ? rule.slice(0, i) + rule.slice(i + 1)
            : slip === "double"
              ? rule.slice(0, i) + rule[i] + rule.slice(i)
              : slip === "case"
                ? rule.toUpperCase()
                : rule.slice(0, i) + rule[i + 1] + rule[i] + rule.slice(i + 2);
        if (typo === rule) return;
        expect(misspeltRuleKey(typo)).toBeDefined();
      }),
    );
  });

  it("reports a rule's first words alone (dry_run, paired_prompt), which read as the rule to a person", () => {
    expect(misspeltRuleKey("dry_run")).toBe("dry_run_required");
    expect(misspeltRuleKey("Paired_Prompt")).toBe("paired_prompt_id");
    expect(misspeltRuleKey("prompt")).toBeUndefined();
  });

  it("reports a near name only when its value has the rule's shape: allowed_models: [gpt-4o] is a key of its own", () => {
    expect(misspeltRule("allowed_models", ["gpt-4o"])).toBeUndefined();
    expect(misspeltRule("default_model", "gpt-4o")).toBeUndefined();
    expect(misspeltRule("prompt_ids", ["a", "b"])).toBeUndefined();
    expect(misspeltRule("review_cycles", 3)).toBeUndefined();
    expect(misspeltRule("allowed_modez", ["DRAFT_ONLY", "APPLY_SAFE"])).toBe("allowed_modes");
    expect(misspeltRule("default_mod", "apply_safe")).toBe("default_mode");
    expect(misspeltRule("paired_prompt", "MD-30")).toBe("paired_prompt_id");
    expect(misspeltRule("dry_run_requried", true)).toBe("dry_run_required");
    expect(misspeltRule("dry_run", "yes")).toBe("dry_run_required");
    expect(misspeltRule("dry_run_requried", 1)).toBe("dry_run_required");
    expect(misspeltRule("dry_run", "required")).toBe("dry_run_required");
    expect(misspeltRule("allowed-modes", ["draft-only", "verify-only"])).toBe("allowed_modes");
    expect(misspeltRule("exact_twins_only", null)).toBeUndefined();
  });

  it("leaves the keys real suites use alone", () => {
    for (const key of [
      "title",
      "category",
      "risk_level",
      "description",
      "owners",
      "inputs",
      "outputs",
      "review",
      "contract_refs",
      "tool_policy",
      "required",
      "related",
    ])
      expect(misspeltRuleKey(key), key).toBeUndefined();
  });

  it("reports `dry_run_requried: true` on an executor where the key is, naming the rule meant", () => {
    const text = plannerText("MD-1", "MD-2").replace("prompt_role: investigative", "prompt_role: investigative\ndry_run_requried: true");
    const { diagnostics } = parsePromptFile("p.md", Buffer.from(text));
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: "FIELD_MISSPELT",
        severity: "error",
        line: lineOf(text, "dry_run_requried:"),
        field: "dry_run_requried",
      }),
    ]);
    expect(diagnostics[0]?.message).toMatch(/spell it `dry_run_required`/);
  });
});
