import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeHtml } from "./escape-html.js";

describe("escapeHtml", () => {
  it("escapes the five characters that can open a tag or end an attribute", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  });

  it("writes out direction overrides and zero-width characters, and replaces control characters", () => {
    expect(escapeHtml("a\u202Eb\u200Bc\u0007d")).toBe("a⟨U+202E⟩b⟨U+200B⟩c�d");
  });

  it("keeps line breaks and tabs of multi-line text", () => {
    expect(escapeHtml("a\n\tb")).toBe("a\n\tb");
  });

  it("never lets a markup character through, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        expect(escapeHtml(s)).not.toMatch(/[<>"']/);
      }),
    );
  });
});
