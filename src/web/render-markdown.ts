import MarkdownIt from "markdown-it";
import { cleanLines } from "../input/clean-text.js";

/** Links may go to http(s) or be relative; any other scheme (`javascript:`, `data:`, `file:`, `vbscript:`) is left as text. */
function isSafeLink(url: string): boolean {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url.trim());
  return scheme === null || /^https?$/i.test(scheme[1] as string);
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.validateLink = isSafeLink;
// Nothing the executor reads may be out of the reviewer's sight:
// - a link reference definition (`[//]: # (text)`, a common "comment") is never rendered: it is shown as text, with
//   every `[text][ref]` that would have used one;
// - a table drops the cells of a row past its header's: tables are shown as the text they are;
// - an entity (`&ZeroWidthSpace;`, `&#x202E;`) would become a character after the invisible ones were written out:
//   entities are shown as written.
md.disable(["reference", "table", "entity"]);

/** What the renderer keeps while it writes a document: the heading shift, and the links it is inside. */
interface RenderEnv {
  headingOffset?: number;
  links?: Array<{ href: string; title: string | null; autolink: boolean }>;
}

/**
 * What a link hides from a reader but not from the executor, written out
 * after it as text: its destination (unless the link shows it, as an autolink
 * does) and its title (a tooltip only on hover).
 */
function shownAfterLink(href: string, title: string | null, autolink: boolean): string {
  return md.utils.escapeHtml(shownAfterLinkText(href, title, autolink));
}

/** shownAfterLink as plain text. */
function shownAfterLinkText(href: string, title: string | null, autolink: boolean): string {
  return `${autolink ? "" : ` (link: ${href})`}${title ? ` (title: ${title})` : ""}`;
}

// A link's shown text decodes its percent-escapes (`%E2%80%8B`): the characters that makes are marked as the rest are.
const normalizeLinkText = md.normalizeLinkText.bind(md);
md.normalizeLinkText = (url: string) => cleanLines(normalizeLinkText(url));

/**
 * An image's description as text, with what a link inside it hides written
 * out too (`![see [x](URL "TITLE") here](img.png)` would keep only "see x here").
 */
function describedAsText(
  children: ReadonlyArray<{
    type: string;
    content: string;
    attrGet(name: string): string | number | null;
    markup: string;
    children: unknown;
  }>,
): string {
  let out = "";
  const links: Array<{ href: string; title: string | null; autolink: boolean }> = [];
  for (const c of children) {
    if (c.type === "text" || c.type === "code_inline") out += c.content;
    else if (c.type === "softbreak" || c.type === "hardbreak") out += " ";
    else if (c.type === "link_open") {
      const title = c.attrGet("title");
      links.push({
        href: String(c.attrGet("href") ?? ""),
        title: title === null ? null : String(title),
        autolink: c.markup === "autolink",
      });
    } else if (c.type === "link_close") {
      const link = links.pop();
      if (link) out += shownAfterLinkText(link.href, link.title, link.autolink);
    } else if (c.type === "image") out += describedAsText((c.children ?? []) as Parameters<typeof describedAsText>[0]);
  }
  return out;
}

/** An image is never fetched (the page makes no request it did not mean to): its alt text is shown as a link to it. */
md.renderer.rules.image = (tokens, idx, _options, _env, _self) => {
  const token = tokens[idx] as NonNullable<(typeof tokens)[number]>;
  const alt = md.utils.escapeHtml(describedAsText(token.children ?? []) || "image");
  const src = String(token.attrGet("src") ?? "");
  const title = token.attrGet("title");
  return `<a class="md-image" href="${md.utils.escapeHtml(src)}" rel="noreferrer">image: ${alt}</a>${shownAfterLink(src, title === null ? null : String(title), false)}`;
};

/** Links out of the page do not tell the other site where they came from; what a link hides is written out after it. */
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx] as NonNullable<(typeof tokens)[number]>;
  token.attrSet("rel", "noreferrer");
  const title = token.attrGet("title");
  const rendering = env as RenderEnv;
  rendering.links ??= [];
  rendering.links.push({
    href: String(token.attrGet("href") ?? ""),
    title: title === null ? null : String(title),
    autolink: token.markup === "autolink",
  });
  token.attrs = (token.attrs ?? []).filter(([name]) => name !== "title");
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.link_close = (tokens, idx, options, env, self) => {
  const link = (env as RenderEnv).links?.pop();
  return self.renderToken(tokens, idx, options) + (link ? shownAfterLink(link.href, link.title, link.autolink) : "");
};

/**
 * A fenced block's info line (```` ```sh … ````) is text the executor reads; rendered, all of it but the first word
 * would vanish (and that word only into a class). It is written out above the block, as text.
 */
const renderFence = md.renderer.rules.fence;
md.renderer.rules.fence = (tokens, idx, options, env, self) => {
  const info = (tokens[idx] as NonNullable<(typeof tokens)[number]>).info.trim();
  const block = renderFence ? renderFence(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
  return info === "" ? block : `<p class="fence-info">code block: ${md.utils.escapeHtml(info)}</p>\n${block}`;
};

/** Headings moved down by the section they are shown in, so a report's `#` never competes with the page's one `<h1>`. */
const shiftHeading: NonNullable<typeof md.renderer.rules.heading_open> = (tokens, idx, options, env, self) => {
  const token = tokens[idx] as NonNullable<(typeof tokens)[number]>;
  const level = Number(token.tag.slice(1)) + ((env as RenderEnv).headingOffset ?? 0);
  token.tag = `h${Math.min(6, level)}`;
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.heading_open = shiftHeading;
md.renderer.rules.heading_close = shiftHeading;

/**
 * Agent-written Markdown (`report.md`, an executor's body) as HTML that can
 * do nothing: raw HTML off (shown as text), links only to http(s) or
 * relative paths, images shown as links, invisible characters written out,
 * headings moved down by `headingOffset` levels (at most h6). Nothing the
 * executor would read is left out of sight: link reference definitions,
 * tables and entities are shown as written, and a link's destination and
 * title are written out after it.
 */
export function renderMarkdown(source: string, headingOffset = 0): string {
  return md.render(cleanLines(source), { headingOffset } satisfies RenderEnv);
}
