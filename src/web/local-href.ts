import { escapeHtml } from "./escape-html.js";

/**
 * A path on this server, escaped for an `href` or `action` attribute; any
 * other URL (a scheme, `//host`, a backslash, a control character) becomes
 * `#`, so a page never links or posts anywhere else.
 */
export function localHref(url: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  return /^\/(?![/\\])[^\\\u0000-\u001f\u007f\s]*$/.test(url) ? escapeHtml(url) : "#";
}
