import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { VerifyReport } from "../../ci/verify-run.js";
import { renderMarkdown } from "../../web/render-markdown.js";
import { renderSummary } from "./verify.js";

/**
 * A table row's cells as GitHub reads them (cmark-gfm's row scanner): a
 * backslash escapes the character after it, whatever it is; any other pipe
 * ends a cell. Returns the cells' raw text, the outer pipes dropped.
 */
function githubCells(row: string): string[] {
  const cells: string[] = [];
  let current = "";
  for (let i = 0; i < row.length; i++) {
    const ch = row[i] as string;
    if (ch === "\\" && i + 1 < row.length) {
      current += ch + (row[i + 1] as string);
      i++;
    } else if (ch === "|") {
      cells.push(current);
      current = "";
    } else current += ch;
  }
  cells.push(current);
  return cells.slice(1, -1);
}

/** A cell's raw text as GitHub shows it: `\|` unescaped to `|` first (cmark-gfm's unescape_pipes), then `\\` to `\`. */
function shownCell(raw: string): string {
  return raw
    .replace(/\\\|/g, "|")
    .replace(/\\(\\)/g, "$1")
    .trim();
}

const report = (subject: string, message: string): VerifyReport => ({
  ok: false,
  run_id: "run_0123456789abcdef",
  trust_source: "trust.yaml",
  findings: [{ check: "changed-file", ok: false, subject, message }],
});

/** The summary's table rows (the header and its delimiter first). */
function rows(markdown: string): string[] {
  return markdown.split("\n").filter((l) => l.startsWith("|"));
}

/** Paths an agent can name: printable text heavy in the characters that matter to a table. */
const hostilePath = fc.string({ unit: fc.constantFrom("\\", "|", "`", "a", "/", " ", "*", "\\|", "|\\"), maxLength: 40 });

describe("verify's step summary", () => {
  it("keeps a path holding \\| in its own cell (attack: `\\|` escaped as `\\\\|` ended the cell and added the agent's own)", () => {
    const md = renderSummary("run.json", report("src/a\\| ✅ | forged | cell", "changed outside every target"));
    const [header, , row] = rows(md) as [string, string, string];
    expect(githubCells(row)).toHaveLength(githubCells(header).length);
    expect(shownCell(githubCells(row)[2] as string)).toBe("src/a\\| ✅ | forged | cell");
  });

  it("gives every row exactly the header's cell count, as GitHub and markdown-it read it, and shows each path as it is", () => {
    fc.assert(
      fc.property(hostilePath, hostilePath, (subject, message) => {
        const summary = renderSummary("run.json", report(subject, message));
        const [header, , row] = rows(summary) as [string, string, string];
        const cells = githubCells(row);
        expect(cells).toHaveLength(githubCells(header).length);
        expect(shownCell(cells[2] as string)).toBe(subject.trim());
        expect(shownCell(cells[3] as string)).toBe(message.trim());
        // As markdown-it reads it (the page's renderer shows a row's cells past the header's, marked): four, none past.
        const html = renderMarkdown(summary);
        expect(html.match(/<td[ >]/g)?.length).toBe(4);
        expect(html).not.toContain("cell-past-header");
      }),
      { numRuns: 300 },
    );
  });
});
