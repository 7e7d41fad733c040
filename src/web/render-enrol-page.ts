import { escapeHtml } from "./escape-html.js";
import { renderLayout } from "./render-layout.js";
import type { EnrolPageView } from "./view-model.js";

/** The enrolment page, `/enrol/{token}`: who is enrolled, with which rights, until when; a button the client script turns into passkey registration. */
export function renderEnrolPage(v: EnrolPageView): string {
  const e = escapeHtml;
  const rights = v.rights.length === 0 ? "none" : v.rights.map((r) => `<code>${e(r)}</code>`).join(", ");
  const body = `<h1>Register a passkey for ${e(v.name)}</h1>
<dl class="summary">
<dt>reviewer</dt><dd>${e(v.name)}</dd>
<dt>rights</dt><dd>${rights}</dd>
<dt>link expires</dt><dd><time datetime="${e(v.expiresAt)}">${e(v.expiresAt)}</time></dd>
</dl>
<p>This link works once. Your device asks you to confirm with a PIN, fingerprint or face (user verification); the passkey then signs every decision you make here.</p>
<button type="button" data-enrol="${e(v.token)}">Register a passkey</button>
<div class="status" id="enrol-status" role="status" aria-live="polite"></div>`;
  return renderLayout(v.layout, "Register a passkey", body);
}
