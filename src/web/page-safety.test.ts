import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { markupShape, unsafeMarkup } from "../test-support/html-checks.js";
import {
  sampleConfirmedRevisionPage,
  sampleEnrolPage,
  sampleErrorPage,
  samplePages,
  sampleRevisionPage,
  sampleRunList,
  sampleRunPage,
  sampleSignInPage,
  sampleWaitingRunList,
} from "../test-support/sample-views.js";
import { renderEnrolPage } from "./render-enrol-page.js";
import { renderErrorPage } from "./render-error-page.js";
import { renderRefusal } from "./render-refusal.js";
import { renderRevisionPage } from "./render-revision-page.js";
import { renderRunListPage } from "./render-run-list-page.js";
import { renderRunPage } from "./render-run-page.js";
import { renderSignInPage } from "./render-signin-page.js";

/** Strings whose value picks a branch of a template (an enum, "all"), and Markdown (tested in render-markdown): left as they are. */
const KEEP = new Set(["state", "change", "signature", "status", "format", "actions", "report", "body"]);

/** The view with its text replaced, in a fixed order, by `texts` (cycled). */
function fillText<T>(view: T, texts: readonly string[]): T {
  let i = 0;
  const walk = (value: unknown, key: string): unknown => {
    if (typeof value === "string") return KEEP.has(key) ? value : (texts[i++ % texts.length] as string);
    if (Array.isArray(value)) return value.map((x, j) => walk(x, String(j)));
    if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    return value;
  };
  return walk(view, "") as T;
}

/** The same text with every character that could make markup replaced by `x`: what the template renders with safe text. */
const defang = (s: string) => s.replace(/[<>"'&]/g, "x");

const hostile = fc.oneof(
  fc.string({ unit: "binary", minLength: 1 }),
  fc.constantFrom(
    "<script>alert(1)</script>",
    `"><img src=x onerror=alert(1)>`,
    "' onmouseover='alert(1)",
    "javascript:alert(1)",
    "//evil.example/x",
    "</textarea><script>x</script>",
    "a\u202Eb\u200Bc\u0000d",
    "&lt;b&gt;",
    "<!--",
    "]]><![CDATA[",
  ),
);
const texts = fc.array(hostile, { minLength: 1, maxLength: 40 });

const RENDERERS: Array<[string, (t: readonly string[]) => string]> = [
  ["run list", (t) => renderRunListPage(fillText(sampleRunList(), t))],
  ["run list waiting on the reviewer", (t) => renderRunListPage(fillText(sampleWaitingRunList(), t))],
  ["revision page with a confirmation", (t) => renderRevisionPage(fillText(sampleConfirmedRevisionPage(), t))],
  ["run page", (t) => renderRunPage(fillText(sampleRunPage(), t))],
  ["revision page", (t) => renderRevisionPage(fillText(sampleRevisionPage(), t))],
  [
    "stale revision page",
    (t) => renderRevisionPage(fillText({ ...sampleRevisionPage(), stale: { revision: 3, url: "/runs/r/pairs/MD-29/revisions/3" } }, t)),
  ],
  ["enrol page", (t) => renderEnrolPage(fillText(sampleEnrolPage(), t))],
  ["sign-in page", (t) => renderSignInPage(fillText(sampleSignInPage(), t))],
  ["error page", (t) => renderErrorPage(fillText(sampleErrorPage(), t))],
  ["refusal", (t) => renderRefusal(fillText(sampleErrorPage(), t))],
];

describe("page safety", () => {
  for (const [name, render] of samplePages())
    it(`${name}: loads nothing from elsewhere and has no inline script, style or event handler`, () => {
      expect(unsafeMarkup(render())).toEqual([]);
    });

  for (const [name, render] of RENDERERS) {
    it(`${name}: any text in any field leaves the tags and attributes of the template as they are`, () => {
      fc.assert(
        fc.property(texts, (t) => {
          const html = render(t);
          const safe = render(t.map(defang));
          expect(markupShape(html)).toEqual(markupShape(safe));
          for (const c of `<>"`) expect(html.split(c).length).toBe(safe.split(c).length);
        }),
        { numRuns: 60 },
      );
    });

    it(`${name}: any text in any field loads nothing and runs nothing`, () => {
      fc.assert(
        fc.property(texts, (t) => {
          expect(unsafeMarkup(render(t))).toEqual([]);
        }),
        { numRuns: 60 },
      );
    });
  }

  it("the filled text does reach each page, escaped", () => {
    for (const [, render] of RENDERERS) {
      const html = render([`<script>"x"</script>`]);
      expect(html).toContain("&lt;script&gt;&quot;x&quot;&lt;/script&gt;");
      expect(html).not.toContain(`<script>"x"`);
    }
  });

  it("every page names the three scripts and the stylesheet by path on this server, none inline", () => {
    const html = renderRunListPage(sampleRunList());
    expect(html).toContain(`<link rel="stylesheet" href="/assets/twinlock.css">`);
    for (const s of ["htmx.min.js", "simplewebauthn-browser.js", "twinlock.js"])
      expect(html).toContain(`<script src="/assets/${s}" defer></script>`);
    expect(html).not.toMatch(/https?:\/\//);
  });
});
