/**
 * The frontmatter (between the first line `---` and the next line `---`,
 * trailing white space allowed on both) and the body after it, with CRLF
 * line ends read as LF. The frontmatter is kept as one string, which the fast
 * parser reads in place, never split into lines. A body can be large, and is
 * kept as one string.
 */
export function splitFrontmatter(text: string): "missing" | "unclosed" | SplitPrompt {
  const firstEnd = lineEnd(text, 0);
  if (text.slice(0, firstEnd).trimEnd() !== "---") return "missing";
  const yamlStart = firstEnd + 1;
  // The closing fence is the first later line that starts with `---` and is nothing more once trailing white space goes.
  for (let at = text.indexOf("---", yamlStart); at !== -1; at = text.indexOf("---", at + 3)) {
    if (at !== yamlStart && text.charCodeAt(at - 1) !== 10) continue;
    const end = lineEnd(text, at);
    if (text.slice(at, end).trimEnd() !== "---") continue;
    // Every frontmatter line ends with the line feed before the fence, so the raw text is the lines joined by `\n`
    // unless a line ended in CR LF (its CR is not part of the line).
    const raw = at === yamlStart ? "" : text.slice(yamlStart, at - 1);
    const crlf = raw.includes("\r");
    const lineCount = raw === "" && at === yamlStart ? 0 : countLines(raw);
    const rest = end >= text.length ? "" : text.slice(end + 1);
    return {
      yamlText: crlf ? splitLines(raw).join("\n") : raw,
      lineCount,
      body: rest.includes("\r") ? rest.replace(/\r\n/g, "\n") : rest,
      bodyLine: lineCount + 3,
    };
  }
  return "unclosed";
}

/** A prompt file's text split at its frontmatter fences. */
export interface SplitPrompt {
  /** The frontmatter's lines joined by `\n`. */
  yamlText: string;
  lineCount: number;
  body: string;
  /** The file line the body starts on. */
  bodyLine: number;
}

/** Index of the line feed ending the line that starts at `start`, or the text's length. */
function lineEnd(text: string, start: number): number {
  const nl = text.indexOf("\n", start);
  return nl === -1 ? text.length : nl;
}

function countLines(raw: string): number {
  let n = 1;
  for (let at = raw.indexOf("\n"); at !== -1; at = raw.indexOf("\n", at + 1)) n++;
  return n;
}

/** Lines split at LF, each without the one CR that may end it. */
function splitLines(raw: string): string[] {
  return raw.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}
