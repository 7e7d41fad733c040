import { escapeHtml } from "./escape-html.js";
import { renderMarkdown } from "./render-markdown.js";

/** How deep tag blocks inside tag blocks are shown as sections; deeper ones are shown as the text they are. */
export const MAX_TAG_BLOCK_DEPTH = 3;

/** A tag line: `<name>` or `</name>` alone on its line, from its first column (prompt tags are snake_case words). */
const TAG_LINE = /^<(\/?)([a-z][a-z0-9_]{0,63})>[ \t]*$/;
/** A fence's opening or closing line (CommonMark: up to three spaces, then three or more backticks or tildes). */
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;

/** One part of a prompt body: Markdown, or a tag block with its name and its own parts. */
export type PromptPart = { kind: "markdown"; text: string } | { kind: "block"; name: string; parts: PromptPart[] };

/**
 * A prompt body split into Markdown and its tag blocks (`<tool_policy>` …
 * `</tool_policy>`, each tag alone on its line, outside code fences), blocks
 * inside blocks to `MAX_TAG_BLOCK_DEPTH`. A tag never closed, or closed only
 * inside a fence, stays Markdown text. Time is linear in the body's lines
 * times the depth: each line is looked at once per level.
 */
export function splitTagBlocks(body: string): PromptPart[] {
  const lines = body.split("\n");
  const inFence: boolean[] = new Array(lines.length);
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE_LINE.exec(lines[i] as string);
    if (fence === null) {
      inFence[i] = false;
      if (m) fence = (m[1] as string).slice(0, 3);
    } else {
      inFence[i] = true;
      if (m && (m[1] as string).startsWith(fence)) fence = null;
    }
  }
  return splitRange(lines, inFence, 0, lines.length, 1);
}

function splitRange(lines: readonly string[], inFence: readonly boolean[], from: number, to: number, depth: number): PromptPart[] {
  // Where each name closes, in order: an opening finds its first close after it without scanning again.
  const closes = new Map<string, number[]>();
  for (let i = from; i < to; i++) {
    const m = inFence[i] ? null : TAG_LINE.exec(lines[i] as string);
    if (m && m[1] === "/") {
      const name = m[2] as string;
      const list = closes.get(name);
      if (list === undefined) closes.set(name, [i]);
      else list.push(i);
    }
  }
  const next = new Map<string, number>();
  const parts: PromptPart[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length > 0) parts.push({ kind: "markdown", text: text.join("\n") });
    text = [];
  };
  for (let i = from; i < to; i++) {
    const m = inFence[i] ? null : TAG_LINE.exec(lines[i] as string);
    if (m && m[1] === "") {
      const name = m[2] as string;
      const list = closes.get(name) ?? [];
      let k = next.get(name) ?? 0;
      while (k < list.length && (list[k] as number) <= i) k++;
      next.set(name, k);
      const close = list[k];
      if (close !== undefined) {
        flush();
        const inner =
          depth < MAX_TAG_BLOCK_DEPTH
            ? splitRange(lines, inFence, i + 1, close, depth + 1)
            : [{ kind: "markdown" as const, text: lines.slice(i + 1, close).join("\n") }];
        parts.push({ kind: "block", name, parts: inner });
        i = close;
        continue;
      }
    }
    text.push(lines[i] as string);
  }
  flush();
  return parts;
}

/** A tag's name as a heading: `authorization_boundary` → "Authorization boundary". */
export function labelTag(name: string): string {
  const words = name.replace(/_+/g, " ").trim();
  return words === "" ? name : words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * An executor prompt's body as the reviewer reads it: Markdown rendered
 * inert (renderMarkdown, headings moved down by `headingOffset`), and each
 * tag block as a labelled section (its heading at the level of a `##` of
 * the body, its tag written out beside it) with its Markdown, tables as
 * tables, inside.
 */
export function renderExecutorPrompt(body: string, headingOffset = 2): string {
  if (body.length <= EXECUTOR_RENDER_LIMIT) return renderParts(splitTagBlocks(body), headingOffset, 0);
  const lineEnd = body.lastIndexOf("\n", EXECUTOR_RENDER_LIMIT);
  const part = body.slice(0, lineEnd > 0 ? lineEnd + 1 : EXECUTOR_RENDER_LIMIT);
  return `<p class="banner banner-partial" role="note">The prompt is rendered here only up to its first ${part.length} of ${body.length} characters; all of it is in the whole file, one click below.</p>
${renderParts(splitTagBlocks(part), headingOffset, 0)}`;
}

/**
 * How much of an executor's body the page renders, in UTF-16 units: the
 * renderer takes up to about 10 µs a character (tables with cells past the
 * header), so a server renders it on a worker thread and keeps the result
 * by hash (renderAgentDocumentsOffThread); a suite's prompt may be 1 MiB,
 * and the whole file is always shown as text too.
 */
export const EXECUTOR_RENDER_LIMIT = 64 * 1024;

function renderParts(parts: readonly PromptPart[], headingOffset: number, depth: number): string {
  return parts
    .map((p) => {
      if (p.kind === "markdown") return renderMarkdown(p.text, headingOffset);
      const level = Math.min(6, 2 + headingOffset + depth);
      const tag = escapeHtml(p.name);
      return `<section class="prompt-block prompt-block-${depth + 1}">
<h${level} class="prompt-block-label">${escapeHtml(labelTag(p.name))} <code class="prompt-tag">&lt;${tag}&gt;</code></h${level}>
${renderParts(p.parts, headingOffset, depth + 1)}</section>
`;
    })
    .join("");
}
