import { escapeHtml } from "./escape-html.js";

/**
 * A unified diff as a `<pre>` whose lines say what they are without colour:
 * each keeps its `+`/`-` sign, added lines are `<ins>` and removed lines
 * `<del>`, each with a visually hidden "added:"/"removed:" for screen
 * readers; the file and hunk headers are marked as such.
 */
export function renderUnifiedDiff(diff: string): string {
  const lines = diff.replace(/\n$/, "").split("\n");
  const out = lines.map((line, i) => {
    const text = escapeHtml(line);
    if (i < 2 && (line.startsWith("--- ") || line.startsWith("+++ "))) return `<span class="diff-file">${text}</span>`;
    if (line.startsWith("@@")) return `<span class="diff-hunk">${text}</span>`;
    if (line.startsWith("+")) return `<ins class="diff-add"><span class="visually-hidden">added: </span>${text}</ins>`;
    if (line.startsWith("-")) return `<del class="diff-del"><span class="visually-hidden">removed: </span>${text}</del>`;
    return `<span class="diff-ctx">${text}</span>`;
  });
  return `<pre class="diff" tabindex="0">${out.join("\n")}</pre>`;
}
