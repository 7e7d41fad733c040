import type { StateBlock } from "markdown-it";
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
// - a table drops the cells of a row past its header's: those cells are put back (see the table rule below);
// - an entity (`&ZeroWidthSpace;`, `&#x202E;`) would become a character after the invisible ones were written out:
//   entities are shown as written.
md.disable(["reference", "entity"]);

/** One row of a table as markdown-it splits it: on each `|` not escaped, `\\|` kept as a `|` in its cell. */
function splitRow(line: string): string[] {
  const cells: string[] = [];
  let current = "";
  let last = 0;
  for (let pos = 0; pos < line.length; pos++) {
    if (line.charCodeAt(pos) !== 0x7c) continue;
    if (pos > 0 && line.charCodeAt(pos - 1) === 0x5c) {
      current += line.slice(last, pos - 1);
      last = pos;
    } else {
      cells.push(current + line.slice(last, pos));
      current = "";
      last = pos + 1;
    }
  }
  cells.push(current + line.slice(last));
  if (cells[0]?.trim() === "") cells.shift();
  if (cells.length > 0 && cells[cells.length - 1]?.trim() === "") cells.pop();
  return cells;
}

type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean;
const tableRule = (md.block.ruler as unknown as { __rules__: Array<{ name: string; fn: BlockRule }> }).__rules__.find(
  (r) => r.name === "table",
)?.fn as BlockRule;

/**
 * Tables are shown as tables, hiding nothing: a row's cells past its header's
 * count (which markdown-it drops) are put back, marked; alignment is a class,
 * never an inline style (the CSP forbids them).
 */
md.block.ruler.at(
  "table",
  (state, startLine, endLine, silent) => {
    const from = state.tokens.length;
    if (!tableRule(state, startLine, endLine, silent)) return false;
    if (silent) return true;
    // The parser keeps its own reference to this array: it is rewritten in place.
    const tokens = state.tokens;
    const table = tokens.splice(from);
    const out = tokens;
    let rowCells = 0;
    let rowLine = -1;
    for (const t of table) {
      const align = t.attrGet("style");
      if (align !== null) {
        t.attrs = (t.attrs ?? []).filter(([name]) => name !== "style");
        t.attrSet("class", `align-${String(align).replace("text-align:", "")}`);
      }
      if (t.type === "tr_open") {
        rowCells = 0;
        rowLine = t.map?.[0] ?? -1;
      } else if (t.type === "td_open" || t.type === "th_open") rowCells++;
      else if (t.type === "tr_close" && rowLine >= 0) {
        const line = state.src.slice((state.bMarks[rowLine] ?? 0) + (state.tShift[rowLine] ?? 0), state.eMarks[rowLine]);
        const cells = splitRow(line.trim());
        for (let c = rowCells; c < cells.length; c++) {
          const open = new state.Token("td_open", "td", 1);
          open.attrSet("class", "cell-past-header");
          const inline = new state.Token("inline", "", 0);
          inline.content = (cells[c] as string).trim();
          inline.children = [];
          const close = new state.Token("td_close", "td", -1);
          open.block = close.block = true;
          out.push(open, inline, close);
        }
      }
      out.push(t);
    }
    return true;
  },
  { alt: ["paragraph", "reference"] },
);

/**
 * Why a link is not made clickable, or null: a link to this machine
 * (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`, `0.0.0.0`, in any
 * spelling the URL parser reads as one, `http://2130706433/` included) or to
 * any explicit port is where an agent runs a server of its own: the browser
 * sends this server's cookies to every port of the same host, so such a
 * link is shown as text with its address, never followed by a click.
 */
export function unfollowedLinkReason(href: string): string | null {
  const trimmed = href.trim();
  // A scheme, or two slashes either way round (a browser reads `\\host` and `/\host` as `//host`): another host.
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(trimmed) || /^[\\/][\\/]/.test(trimmed);
  if (!absolute) return null;
  let u: URL;
  try {
    u = new URL(trimmed, "http://relative.invalid/");
  } catch {
    return "it is not an address a browser can open safely";
  }
  // A fully qualified name's trailing dots ("localhost.", "foo.localhost.") name the same host.
  let host = u.hostname.toLowerCase();
  while (host.endsWith(".")) host = host.slice(0, -1);
  const loopback =
    host === "localhost" ||
    host.endsWith(".localhost") ||
    /^127\./.test(host) ||
    host === "0.0.0.0" ||
    host === "[::1]" ||
    host === "[::]" ||
    /^\[::ffff:(7f[0-9a-f]{2}:|127\.)/.test(host);
  if (loopback) return "it points at this machine, where an agent can run a server of its own";
  if (u.port !== "") return `it names port ${u.port}, where an agent can run a server of its own`;
  return null;
}

/** What the renderer keeps while it writes a document: the heading shift, and the links it is inside. */
interface RenderEnv {
  headingOffset?: number;
  links?: Array<{ href: string; title: string | null; autolink: boolean; unfollowed: string | null }>;
}

/**
 * What a link hides from a reader but not from the executor, written out
 * after it as text: its destination (unless the link shows it, as an autolink
 * does) and its title (a tooltip only on hover).
 */
function shownAfterLink(href: string, title: string | null, autolink: boolean, unfollowed: string | null = null): string {
  const shown = md.utils.escapeHtml(shownAfterLinkText(href, title, autolink || unfollowed !== null));
  if (unfollowed === null) return shown;
  return `${shown} <span class="md-link-unfollowed">(link not followed: ${md.utils.escapeHtml(href)}; ${md.utils.escapeHtml(unfollowed)} — copy the address only if you mean to open it)</span>`;
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
  const unfollowed = unfollowedLinkReason(src);
  if (unfollowed !== null)
    return `<span class="md-image">image: ${alt}</span>${shownAfterLink(src, title === null ? null : String(title), false, unfollowed)}`;
  return `<a class="md-image" href="${md.utils.escapeHtml(src)}" rel="noreferrer">image: ${alt}</a>${shownAfterLink(src, title === null ? null : String(title), false)}`;
};

/** Links out of the page do not tell the other site where they came from; what a link hides is written out after it. */
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx] as NonNullable<(typeof tokens)[number]>;
  token.attrSet("rel", "noreferrer");
  const title = token.attrGet("title");
  const rendering = env as RenderEnv;
  rendering.links ??= [];
  const href = String(token.attrGet("href") ?? "");
  const unfollowed = unfollowedLinkReason(href);
  rendering.links.push({ href, title: title === null ? null : String(title), autolink: token.markup === "autolink", unfollowed });
  // A link to this machine or another port is text, not a link: its address is written out after it.
  if (unfollowed !== null) return '<span class="md-link-text">';
  token.attrs = (token.attrs ?? []).filter(([name]) => name !== "title");
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.link_close = (tokens, idx, options, env, self) => {
  const link = (env as RenderEnv).links?.pop();
  if (link?.unfollowed) return `</span>${shownAfterLink(link.href, link.title, link.autolink, link.unfollowed)}`;
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
 * executor would read is left out of sight: link reference definitions
 * and entities are shown as written, a table row's cells past its header's are shown, and a link's destination and
 * title are written out after it.
 */
export function renderMarkdown(source: string, headingOffset = 0): string {
  return md.render(cleanLines(source), { headingOffset } satisfies RenderEnv);
}
