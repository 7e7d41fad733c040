import { describe, expect, it } from "vitest";
import { renderLayout } from "./render-layout.js";
import type { LayoutView } from "./view-model.js";

describe("renderLayout", () => {
  const page = (layout: LayoutView = { reviewer: "alice", csrf: "tok", insecureHttp: false }) =>
    renderLayout(layout, "Runs", "<h1>Runs</h1>");

  it("starts with the doctype, a language, the viewport and the title", () => {
    const html = page();
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    expect(html).toContain(`<meta name="viewport" content="width=device-width,initial-scale=1">`);
    expect(html).toContain("<title>Runs · twinlock</title>");
  });

  it("gives the client script the CSRF token in a meta element", () => {
    expect(page()).toContain(`<meta name="csrf-token" content="tok">`);
  });

  it("names the signed-in reviewer in the header, with a sign-out form that carries the session's CSRF token", () => {
    expect(page()).toContain("Signed in as <strong>alice</strong>");
    expect(page()).toMatch(
      /<form class="signout" method="post" action="\/signout" data-signout><input type="hidden" name="csrf" value="tok"><button type="submit" class="link-button">Sign out<\/button><\/form>/,
    );
    expect(page({ reviewer: null, csrf: "", insecureHttp: false })).not.toContain("Sign out");
  });

  it("says nobody is signed in and links to the sign-in page", () => {
    const html = page({ reviewer: null, csrf: "tok", insecureHttp: false });
    expect(html).toContain("Not signed in");
    expect(html).toContain(`<a href="/signin">Sign in</a>`);
  });

  it("shows a banner when the server runs with --insecure-http on a network address, and none otherwise", () => {
    expect(page({ reviewer: "a", csrf: "t", insecureHttp: true })).toMatch(
      /<p class="banner banner-insecure" role="alert">.*--insecure-http/,
    );
    expect(page()).not.toContain("banner-insecure");
  });

  it("has a skip link to the main content", () => {
    const html = page();
    expect(html).toContain(`<a class="skip-link" href="#main">Skip to content</a>`);
    expect(html).toContain(`<main id="main" tabindex="-1">`);
  });
});
