import { describe, expect, it } from "vitest";
import { showInvisible } from "../input/clean-text.js";
import { MemoryParseCache } from "./parse-cache.js";
import { parsePromptFile } from "./parse-prompt-file.js";

/** Frontmatter an agent writes to make a person read one thing and twinlock another, or to stop the gate. */
const parse = (frontmatter: string, body = "body\n") =>
  parsePromptFile("x.md", Buffer.from(`---\nprompt_id: MD-30\n${frontmatter}---\n${body}`));
const codes = (r: ReturnType<typeof parse>) => r.diagnostics.map((d) => `${d.code} ${d.message}`);

describe("frontmatter written to deceive or to stop the gate", () => {
  it("refuses a key with an invisible character in it, which reads as a rule and would be an unknown key", () => {
    const r = parse("allowed_modes\u200b: [DRAFT_ONLY]\n");
    expect(r.prompt).toBeUndefined();
    expect(codes(r)).toEqual([expect.stringMatching(/^FRONTMATTER_YAML the frontmatter holds U\+200B/)]);
  });

  it("refuses a key spelled with a look-alike letter (Cyrillic а)", () => {
    const r = parse("\u0430llowed_modes: [DRAFT_ONLY]\n");
    expect(r.prompt).toBeUndefined();
    expect(codes(r)).toEqual([expect.stringMatching(/key "\u0430llowed_modes" is not a plain ASCII name/)]);
  });

  it("refuses dry_run_required written as anything but true or false (yes is true to some YAML readers)", () => {
    const r = parse("dry_run_required: yes\n");
    expect(codes(r)).toEqual([expect.stringMatching(/^FIELD_TYPE `dry_run_required` must be true or false, found string "yes"/)]);
  });

  it("reports frontmatter nested thousands deep instead of crashing", () => {
    const r = parse(`x:\n  ${"- ".repeat(5000)}1\n`);
    expect(r.prompt).toBeUndefined();
    expect(r.diagnostics[0]?.code).toBe("FRONTMATTER_YAML");
  });

  it("refuses frontmatter of 100,000 keys the fast parser cannot read before the full parser would take minutes", () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `k${i}: 1`).join("\n");
    const r = parse(`z: {a: 1}\n${keys}\n`);
    expect(codes(r)).toEqual([expect.stringMatching(/^FRONTMATTER_YAML the frontmatter has 100002 lines, over the 5000-line limit/)]);
  });

  it("reports text in the body a person cannot see (tag characters), and keeps the emoji people write", () => {
    const hidden = parse("title: ok ⚠️ 👩‍💻\n", "Fine.\u{E0072}\u{E0075}\u{E006E}\n");
    expect(hidden.prompt?.title).toBe("ok ⚠️ 👩‍💻");
    expect(codes(hidden)).toEqual([expect.stringMatching(/^BODY_HIDDEN_TEXT the body holds U\+E0072/)]);
    expect(hidden.diagnostics[0]).toMatchObject({ line: 5, col: 6 });
  });
});

describe("what a reviewer is shown", () => {
  it("writes out variation selectors, fillers and private-use characters, which a terminal shows as nothing", () => {
    expect(showInvisible("🙂\uFE00\u{E0100}a\u3164b\u2800\uE000")).toBe("🙂⟨U+FE00⟩⟨U+E0100⟩a⟨U+3164⟩b⟨U+2800⟩⟨U+E000⟩");
  });
});

describe("the parse cache", () => {
  it("does not keep an entry far larger than its file (aliases written out again and again)", () => {
    const cache = new MemoryParseCache();
    const big = { a: "x".repeat(100_000), b: "x".repeat(100_000) };
    cache.set("0".repeat(64), big, 1000);
    expect(cache.get("0".repeat(64))).toBeUndefined();
    cache.set("1".repeat(64), { a: "x" }, 1000);
    expect(cache.get("1".repeat(64))).toEqual({ a: "x" });
  });
});
