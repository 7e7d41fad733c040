import { escapeHtml } from "./escape-html.js";
import { localHref } from "./local-href.js";
import { renderLayout } from "./render-layout.js";
import type { ErrorPageView } from "./view-model.js";

/** The error page: the title as its heading, the one-line message, what to do, and a link onward (or back to the run list). */
export function renderErrorPage(v: ErrorPageView): string {
  const e = escapeHtml;
  const link = v.link === null ? `<a href="/">Back to the runs</a>` : `<a href="${localHref(v.link.url)}">${e(v.link.label)}</a>`;
  const body = `<h1>${e(v.title)}</h1>
<p class="error-message">${e(v.message)}</p>
<p>${e(v.remedy)}</p>
<p>${link}</p>`;
  return renderLayout(v.layout, `${v.status} ${v.title}`, body);
}
