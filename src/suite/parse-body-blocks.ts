import type { Position } from "./prompt.js";

/** One `<tag> … </tag>` section of a prompt body. */
export interface BodyBlock {
  tag: string;
  content: string;
  /** Position of the opening tag in the file (worked out each time it is read). */
  readonly position: Position;
  closed: boolean;
}

const OPEN = /<([a-z][a-z0-9_]*)>/g;

/**
 * Find the body's blocks. A block runs from `<tag>` to the next `</tag>`;
 * one that never closes is returned with `closed: false` and runs to the end.
 * The first block of each tag wins; positions are file positions.
 */
export function parseBodyBlocks(body: string, bodyLine: number): Map<string, BodyBlock> {
  const blocks = new Map<string, BodyBlock>();
  OPEN.lastIndex = 0;
  for (let m = OPEN.exec(body); m !== null; m = OPEN.exec(body)) {
    const tag = m[1] as string;
    if (blocks.has(tag)) continue;
    const start = m.index + m[0].length;
    const end = body.indexOf(`</${tag}>`, start);
    const offset = m.index;
    blocks.set(tag, {
      tag,
      content: body.slice(start, end === -1 ? body.length : end),
      // Worked out when asked: only a block with a problem to report needs its line, and most have none.
      get position() {
        return positionAt(body, bodyLine, offset);
      },
      closed: end !== -1,
    });
  }
  return blocks;
}

/** The file position of `offset` in a body that starts on file line `bodyLine`. */
function positionAt(body: string, bodyLine: number, offset: number): Position {
  let line = 0;
  let lineStart = 0;
  for (let nl = body.indexOf("\n"); nl !== -1 && nl < offset; nl = body.indexOf("\n", lineStart)) {
    line++;
    lineStart = nl + 1;
  }
  return { line: bodyLine + line, col: offset - lineStart + 1 };
}

/** Lower-case and fold runs of white space, for phrase matching that ignores case and spacing. */
export function foldText(text: string): string {
  // Runs of white space become one space; a lone space, the usual case, is left where it is.
  return text
    .toLowerCase()
    .replace(/\s{2,}|[^\S ]/g, " ")
    .trim();
}

/** Runs of white space other than line feeds become one space (lines stay lines); a lone space is left where it is. */
export function foldLineSpaces(text: string): string {
  return text.replace(/[^\S\n]{2,}|[^\S\n ]/g, " ");
}
