import { cleanText } from "./clean-text.js";

/**
 * Agent-written text as one cell of a GitHub-flavoured Markdown table row:
 * one line (cleanText), every backslash doubled first and then every pipe
 * escaped, so no text splits its row. GitHub's table scanner (cmark-gfm)
 * reads a backslash as escaping the next character whatever it is: a lone
 * `\|` escaped as `\\|` would be an escaped backslash and then a pipe, a
 * cell of the agent's own; doubled first, `\|` becomes `\\\|`, which shows
 * as the `\|` it was. markdown-it's splitter (a pipe after a backslash is
 * escaped) reads the same cells.
 */
export function markdownTableCell(s: string): string {
  return cleanText(s).replace(/\\/g, "\\\\").replace(/\|/g, "\\|");
}
