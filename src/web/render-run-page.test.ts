import { describe, expect, it } from "vitest";
import { sampleRunPage } from "../test-support/sample-views.js";
import { renderRunPage } from "./render-run-page.js";

describe("renderRunPage", () => {
  const html = renderRunPage(sampleRunPage());

  it("shows the run's settings: mode, environment, actions and budget", () => {
    expect(html).toContain("<h1>Run <code>run_0123456789abcdef</code></h1>");
    expect(html).toContain("<dt>mode</dt><dd>APPLY_SAFE</dd>");
    expect(html).toContain("<dt>environment</dt><dd>staging</dd>");
    expect(html).toContain("<dt>actions</dt><dd><code>A1</code>, <code>A2</code></dd>");
    expect(html).toContain("<dt>budget</dt><dd>3 per admission</dd>");
  });

  it("shows each pair with its state, its next step as a sentence, and a link to its current revision", () => {
    expect(html).toContain("<h3><code>MD-29</code> → <code>MD-30</code> Apply the fix</h3>");
    expect(html).toContain("<dt>next step</dt><dd>Review the frozen plan of MD-29: request changes, approve it or decline it.</dd>");
    expect(html).toContain(`<a href="/runs/run_0123456789abcdef/pairs/MD-29/revisions/2">Review revision 2 of MD-29</a>`);
    expect(html).toContain("Nothing frozen yet.");
    expect(html).not.toContain("twinlock review-pair-plan");
  });

  it("lists standing and lifted stops, with a lift form for the standing one only", () => {
    expect(html).toContain("<code>!STOP:data-loss-risk</code> on <code>MD-29</code>, raised by bob");
    expect(html).toContain("lifted by alice");
    expect(html.match(/id="form-lift-\d+"/g)).toEqual([`id="form-lift-0"`]);
    expect(html).toContain(`<input type="hidden" name="reason" value="data-loss-risk">`);
    expect(html).toContain(`<textarea id="lift-resolution-0" name="resolution" rows="3" required></textarea>`);
  });

  it("offers a form to raise a stop on the whole run or one pair, signed with the passkey", () => {
    expect(html).toMatch(/<form id="form-stop" class="decision" method="post" action="\/runs\/run_0123456789abcdef\/stops" data-passkey>/);
    expect(html).toContain(`<option value="">the whole run</option><option value="MD-29">MD-29</option>`);
    expect(html).toContain(`<input type="hidden" name="csrf" value="csrf-token-1">`);
  });

  it("offers no stop forms when the view allows none", () => {
    const none = renderRunPage({
      ...sampleRunPage(),
      stopAction: null,
      stops: sampleRunPage().stops.map((s) => ({ ...s, liftAction: null })),
    });
    expect(mainOf(none)).not.toContain("<form");
  });
});

/** The page's own content: the header's sign-out form is the layout's, not the page's. */
function mainOf(html: string): string {
  return html.slice(html.indexOf("<main"));
}
