import { describe, expect, it } from "vitest";
import { accessibilityProblems, markupShape, unsafeMarkup } from "./html-checks.js";

const page = (body: string) =>
  `<!doctype html><html lang="en"><body><a class="skip-link" href="#main">Skip</a><main id="main">${body}</main></body></html>`;

describe("the HTML checks the page tests rely on", () => {
  it("pass a well-formed page", () => {
    expect(accessibilityProblems(page(`<h1>T</h1><h2>S</h2><label for="x">X</label><input id="x">`))).toEqual([]);
  });

  it("flag two <h1>, a skipped level, an unlabelled control, a form without a submit button and a duplicate id", () => {
    const problems = accessibilityProblems(page(`<h1>A</h1><h3 id="d">B</h3><h1 id="d">C</h1><form><textarea name="f"></textarea></form>`));
    expect(problems).toEqual(
      expect.arrayContaining([
        "2 <h1> elements",
        "heading h1 is followed by h3",
        "duplicate id d",
        `<textarea name="f"> has no label`,
        "a form without a submit button",
      ]),
    );
  });

  it("flag inline scripts and styles, event handlers, external resources and javascript: links", () => {
    const problems = unsafeMarkup(
      `<script>x</script><p style="a" onclick="b"></p><script src="https://cdn/x.js"></script><img src="/a"><a href="javascript:x">x</a><link rel="stylesheet" href="//cdn/x.css">`,
    );
    expect(problems).toHaveLength(7);
  });

  it("describe markup by its tags and attribute names", () => {
    expect(markupShape(`<p class="a">x</p><input type="hidden" value='y'>`)).toEqual(["p[class]", "input[type,value]"]);
  });
});
