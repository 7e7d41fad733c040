import { describe, expect, it } from "vitest";
import { sampleErrorPage } from "../test-support/sample-views.js";
import { renderErrorPage } from "./render-error-page.js";

describe("renderErrorPage", () => {
  it("shows the title as the heading, the message, what to do and the link", () => {
    const html = renderErrorPage(sampleErrorPage());
    expect(html).toContain("<title>409 Stale revision · twinlock</title>");
    expect(html).toContain("<h1>Stale revision</h1>");
    expect(html).toContain(`<p class="error-message">The hash you reviewed is not the current one.</p>`);
    expect(html).toContain("<p>Read the current revision and decide again.</p>");
    expect(html).toContain(`<a href="/runs/run_0123456789abcdef/pairs/MD-29/revisions/3">Revision 3</a>`);
  });

  it("links back to the runs when there is no link", () => {
    expect(renderErrorPage({ ...sampleErrorPage(), link: null })).toContain(`<a href="/">Back to the runs</a>`);
  });
});
