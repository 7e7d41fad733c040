import type { Position } from "./prompt.js";

/** One `<tag> … </tag>` section of a prompt body. */
export interface BodyBlock {
  tag: string;
  content: string;
  /** Position of the opening tag in the file (worked out each time it is read). */
  readonly position: Position;
  closed: boolean;
}

/**
 * Find the body's blocks. A block runs from `<tag>` (a lower-case letter,
 * then lower-case letters, digits and `_`) to the next `</tag>`; one that
 * never closes is returned with `closed: false` and runs to the end. The
 * first block of each tag wins; positions are file positions.
 */
export function parseBodyBlocks(body: string, bodyLine: number): Map<string, BodyBlock> {
  const blocks = new Map<string, BodyBlock>();
  // Prose holds few `<`: going from one to the next by indexOf is several times faster than running a tag pattern over every character.
  for (let open = body.indexOf("<"); open !== -1; open = body.indexOf("<", open + 1)) {
    const nameEnd = tagNameEnd(body, open + 1);
    if (nameEnd === -1) continue;
    const tag = body.slice(open + 1, nameEnd);
    if (blocks.has(tag)) continue;
    const start = nameEnd + 1;
    const end = body.indexOf(`</${tag}>`, start);
    blocks.set(tag, new Block(tag, body.slice(start, end === -1 ? body.length : end), end !== -1, body, bodyLine, open));
  }
  return blocks;
}

/** Where the tag name starting at `from` ends on its `>`, or -1 when `from` starts no `[a-z][a-z0-9_]*>`. */
function tagNameEnd(body: string, from: number): number {
  let c = body.charCodeAt(from);
  if (!(c >= 97 && c <= 122)) return -1;
  let i = from;
  do c = body.charCodeAt(++i);
  while ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95);
  return c === 62 ? i : -1;
}

/**
 * A block whose position is worked out when read: only a block with a
 * problem to report needs its line, and most have none. The getter sits on
 * the class, so a block costs no closure of its own.
 */
class Block implements BodyBlock {
  readonly #body: string;
  readonly #bodyLine: number;
  readonly #offset: number;

  constructor(
    public tag: string,
    public content: string,
    public closed: boolean,
    body: string,
    bodyLine: number,
    offset: number,
  ) {
    this.#body = body;
    this.#bodyLine = bodyLine;
    this.#offset = offset;
  }

  get position(): Position {
    return positionAt(this.#body, this.#bodyLine, this.#offset);
  }
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
