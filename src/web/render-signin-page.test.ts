import { describe, expect, it } from "vitest";
import { sampleSignInPage } from "../test-support/sample-views.js";
import { renderSignInPage } from "./render-signin-page.js";

describe("renderSignInPage", () => {
  it("has a Sign in with a passkey button, where to go next, and a status region", () => {
    const html = renderSignInPage(sampleSignInPage());
    expect(html).toContain(`<button type="button" data-signin data-next="/runs/run_0123456789abcdef">Sign in with a passkey</button>`);
    expect(html).toContain(`id="signin-status" role="status" aria-live="polite"`);
  });

  it("goes to the run list when no page is named, and never to another site", () => {
    expect(renderSignInPage({ ...sampleSignInPage(), next: null })).toContain(`data-next="/"`);
    expect(renderSignInPage({ ...sampleSignInPage(), next: "https://evil.example/" })).toContain(`data-next="#"`);
  });
});
