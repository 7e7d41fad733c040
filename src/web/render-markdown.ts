import MarkdownIt from "markdown-it";
import { cleanLines } from "../input/clean-text.js";

/** Links may go to http(s) or be relative; any other scheme (`javascript:`, `data:`, `file:`, `vbscript:`) is left as text. */
function isSafeLink(url: string): boolean {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url.trim());
  return scheme === null || /^https?$/i.test(scheme[1] as string);
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.validateLink = isSafeLink;
// A link reference definition (`[//]: # (text)`, a common "comment") is never shown when rendered, yet the executor
// reads it: written out as text instead, with every `[text][ref]` that would have used one.
md.disable("reference");

/** What the renderer keeps while it writes a document: the heading shift, and the titles of the links it is inside. */
interface RenderEnv {
  headingOffset?: number;
  titles?: Array<string | null>;
}

/** A title shows only on hover, and the executor reads it as text: written out after the link, as text. */
const titleText = (title: string | number | null | undefined) => (title ? ` (title: ${md.utils.escapeHtml(String(title))})` : "");

/** An image is never fetched (the page makes no request it did not mean to): its alt text is shown as a link to it. */
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx] as NonNullable<(typeof tokens)[number]>;
  const alt = md.utils.escapeHtml(self.renderInlineAsText(token.children ?? [], options, env) || "image");
  const src = String(token.attrGet("src") ?? "");
  return `<a class="md-image" href="${md.utils.escapeHtml(src)}" rel="noreferrer">image: ${alt}</a>${titleText(token.attrGet("title"))}`;
};

/** Links out of the page do not tell the other site where they came from; a link's title is written out after it. */
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx] as NonNullable<(typeof tokens)[number]>;
  token.attrSet("rel", "noreferrer");
  const title = token.attrGet("title");
  const rendering = env as RenderEnv;
  rendering.titles ??= [];
  rendering.titles.push(title === null ? null : String(title));
  token.attrs = (token.attrs ?? []).filter(([name]) => name !== "title");
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.link_close = (tokens, idx, options, env, self) =>
  self.renderToken(tokens, idx, options) + titleText((env as RenderEnv).titles?.pop());

/** A table column's alignment as a class, not a style attribute (the CSP allows no inline style). */
const alignCell: NonNullable<typeof md.renderer.rules.th_open> = (tokens, idx, options, _env, self) => {
  const token = tokens[idx] as NonNullable<(typeof tokens)[number]>;
  const align = /text-align:(left|center|right)/.exec(String(token.attrGet("style") ?? ""));
  token.attrs = (token.attrs ?? []).filter(([name]) => name !== "style");
  if (align) token.attrSet("class", `align-${align[1]}`);
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.th_open = alignCell;
md.renderer.rules.td_open = alignCell;

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
 * executor would read is left out of sight: link reference definitions are
 * shown as text, and link titles written out after their links.
 */
export function renderMarkdown(source: string, headingOffset = 0): string {
  return md.render(cleanLines(source), { headingOffset } satisfies RenderEnv);
}
