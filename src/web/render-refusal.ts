import { escapeHtml } from "./escape-html.js";
import { localHref } from "./local-href.js";
import type { ErrorView } from "./view-model.js";

/** A refusal as a fragment for htmx to swap in: an alert with its title, the one-line message, what to do, and the link if any. */
export function renderRefusal(v: ErrorView): string {
  const e = escapeHtml;
  const link = v.link === null ? "" : ` <a href="${localHref(v.link.url)}">${e(v.link.label)}</a>`;
  return `<div class="refusal" role="alert">
<p class="refusal-title"><strong>${e(v.title)}</strong></p>
<p>${e(v.message)}</p>
<p>${e(v.remedy)}${link}</p>
</div>`;
}
