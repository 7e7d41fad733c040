import { escapeHtml } from "./escape-html.js";
import type { LayoutView } from "./view-model.js";

/** htmx must not inject its indicator `<style>` (the CSP forbids inline styles) nor evaluate code. */
const HTMX_CONFIG = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}`;

/**
 * The frame of every page: document head (viewport, title, the CSRF token
 * for the client script, the stylesheet and the three scripts, all served
 * from this server and none inline, for a CSP of `default-src 'self'`), a
 * skip link to `<main id="main">`, a header with the signed-in reviewer, and
 * the insecure-HTTP banner when the view says so. `body` is trusted HTML;
 * `mainClass`, classes for `<main>` (a wider page, one with a decision panel).
 */
export function renderLayout(layout: LayoutView, title: string, body: string, mainClass = ""): string {
  const who =
    layout.reviewer === null
      ? `<span class="who">Not signed in</span> <a href="/signin">Sign in</a>`
      : `<span class="who">Signed in as <strong>${escapeHtml(layout.reviewer)}</strong></span> <form class="signout" method="post" action="/signout" data-signout><input type="hidden" name="csrf" value="${escapeHtml(layout.csrf)}"><button type="submit" class="link-button">Sign out</button></form>`;
  const banner = layout.insecureHttp
    ? `<p class="banner banner-insecure" role="alert"><strong>Insecure connection:</strong> this server runs with --insecure-http on a network address. Anyone on the network path can read these pages and alter them.</p>\n`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="csrf-token" content="${escapeHtml(layout.csrf)}">
<meta name="htmx-config" content='${HTMX_CONFIG}'>
<title>${escapeHtml(title)} · twinlock</title>
<link rel="stylesheet" href="/assets/twinlock.css">
<script src="/assets/htmx.min.js" defer></script>
<script src="/assets/simplewebauthn-browser.js" defer></script>
<script src="/assets/twinlock.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<a class="brand" href="/">twinlock</a>
<div class="session">${who}</div>
</header>
${banner}<main id="main" tabindex="-1"${mainClass === "" ? "" : ` class="${escapeHtml(mainClass)}"`}>
${body}
</main>
</body>
</html>
`;
}
