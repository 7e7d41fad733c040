/**
 * Small checks of the HTML the pages render, for tests: the pages escape
 * every text, so a regular scan of tags is exact on their output.
 */

/** One start tag: its name and attributes (name → value, "" when bare). */
export interface Tag {
  name: string;
  attrs: Map<string, string>;
}

const TAG = /<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g;
const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

/** Every start tag of `html`, in order. */
export function startTags(html: string): Tag[] {
  return [...html.matchAll(TAG)].map((m) => ({
    name: (m[1] as string).toLowerCase(),
    attrs: new Map([...(m[2] ?? "").matchAll(ATTR)].map((a) => [(a[1] as string).toLowerCase(), a[2] ?? a[3] ?? a[4] ?? ""])),
  }));
}

/** The tags and attribute names of `html` as one string per tag: what escaping must keep the same whatever the text. */
export function markupShape(html: string): string[] {
  return startTags(html).map((t) => `${t.name}[${[...t.attrs.keys()].join(",")}]`);
}

/** A URL that loads or posts to another origin, or runs code. */
function isForeign(url: string): boolean {
  return /^\s*([a-z][a-z0-9+.-]*:|\/\/|\\)/i.test(url);
}

/**
 * What would break a CSP of `default-src 'self'` or load anything from
 * elsewhere: inline scripts or styles, event-handler attributes, external
 * `src`/stylesheets/form actions, elements that fetch (img, iframe…), and
 * links to `javascript:`/`data:` URLs.
 */
export function unsafeMarkup(html: string): string[] {
  const out: string[] = [];
  for (const t of startTags(html)) {
    for (const [name, value] of t.attrs) {
      if (name === "style") out.push(`<${t.name}> has a style attribute`);
      if (name.startsWith("on")) out.push(`<${t.name}> has an event handler ${name}`);
      if (["src", "srcset", "action", "formaction", "poster", "background"].includes(name) && isForeign(value))
        out.push(`<${t.name} ${name}="${value}"> is not on this server`);
    }
    if (t.name === "script" && !t.attrs.has("src")) out.push("an inline <script>");
    if (["style", "img", "iframe", "object", "embed", "frame", "video", "audio", "source", "base"].includes(t.name))
      out.push(`a <${t.name}>`);
    if (t.name === "link" && isForeign(t.attrs.get("href") ?? "")) out.push(`<link href="${t.attrs.get("href")}">`);
    if (t.name === "meta" && t.attrs.get("http-equiv")?.toLowerCase() === "refresh") out.push("a meta refresh");
    const href = t.attrs.get("href");
    if (href !== undefined && /^\s*([a-z][a-z0-9+.-]*):/i.test(href) && !/^\s*https?:/i.test(href)) out.push(`a link to ${href}`);
  }
  return out;
}

/**
 * What keeps a page from being read with a keyboard and a screen reader:
 * not exactly one `<h1>`, a heading level skipped, a form control without
 * a `<label for>` or `aria-label`, a form without a submit button, a skip
 * link whose target is missing, a duplicate ID, no `lang`.
 */
export function accessibilityProblems(html: string): string[] {
  const out: string[] = [];
  const tags = startTags(html);
  const levels = tags.filter((t) => /^h[1-6]$/.test(t.name)).map((t) => Number(t.name[1]));
  if (levels.filter((l) => l === 1).length !== 1) out.push(`${levels.filter((l) => l === 1).length} <h1> elements`);
  if (levels[0] !== undefined && levels[0] !== 1) out.push("the first heading is not an <h1>");
  for (let i = 1; i < levels.length; i++)
    if ((levels[i] as number) > (levels[i - 1] as number) + 1) out.push(`heading h${levels[i - 1]} is followed by h${levels[i]}`);
  const ids = tags.map((t) => t.attrs.get("id")).filter((x): x is string => x !== undefined);
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) out.push(`duplicate id ${id}`);
    seen.add(id);
  }
  const labelled = new Set(tags.filter((t) => t.name === "label").map((t) => t.attrs.get("for")));
  for (const t of tags) {
    const type = t.attrs.get("type") ?? "";
    const control = (t.name === "input" && !["hidden", "submit", "button"].includes(type)) || t.name === "select" || t.name === "textarea";
    if (control && !t.attrs.has("aria-label") && !labelled.has(t.attrs.get("id")))
      out.push(`<${t.name} name="${t.attrs.get("name")}"> has no label`);
  }
  for (const form of html.split(/<form\b/).slice(1)) {
    const inner = form.slice(0, form.indexOf("</form>"));
    if (!/<button type="submit"/.test(inner)) out.push("a form without a submit button");
  }
  for (const t of tags)
    if (
      t.name === "a" &&
      t.attrs.get("href")?.startsWith("#") &&
      t.attrs.get("href") !== "#" &&
      !seen.has((t.attrs.get("href") as string).slice(1))
    )
      out.push(`link to missing ${t.attrs.get("href")}`);
  if (!/<a class="skip-link" href="#main">/.test(html) || !seen.has("main")) out.push("no skip link to #main");
  if (!/<html lang="[a-z]+">/.test(html)) out.push("no lang on <html>");
  return out;
}
