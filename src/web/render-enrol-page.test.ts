import { describe, expect, it } from "vitest";
import { sampleEnrolPage } from "../test-support/sample-views.js";
import { renderEnrolPage } from "./render-enrol-page.js";

describe("renderEnrolPage", () => {
  const html = renderEnrolPage(sampleEnrolPage());

  it("says who is enrolled, with which rights, until when", () => {
    expect(html).toContain("<h1>Register a passkey for bob</h1>");
    expect(html).toContain("<dt>rights</dt><dd><code>review</code>, <code>consent</code></dd>");
    expect(html).toContain(`<time datetime="2026-05-01T10:15:00.000Z">`);
  });

  it("has a Register a passkey button carrying the token for the client script, and a status region", () => {
    expect(html).toContain(`<button type="button" data-enrol="tok123">Register a passkey</button>`);
    expect(html).toContain(`<div class="status" id="enrol-status" role="status" aria-live="polite"></div>`);
  });
});
