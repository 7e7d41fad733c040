import { describe, expect, it } from "vitest";
import { sampleErrorPage } from "../test-support/sample-views.js";
import { renderRefusal } from "./render-refusal.js";

describe("renderRefusal", () => {
  it("is a fragment with an alert role: title, message, what to do and the link", () => {
    const html = renderRefusal(sampleErrorPage());
    expect(html.startsWith(`<div class="refusal" role="alert">`)).toBe(true);
    expect(html).not.toContain("<html");
    expect(html).toContain("<strong>Stale revision</strong>");
    expect(html).toContain("<p>The hash you reviewed is not the current one.</p>");
    expect(html).toContain(
      `Read the current revision and decide again. <a href="/runs/run_0123456789abcdef/pairs/MD-29/revisions/3">Revision 3</a>`,
    );
  });
});
