import type { Position } from "./prompt.js";

/** One `<tag> … </tag>` section of a prompt body. */
export interface BodyBlock {
  tag: string;
  content: string;
  /** Position of the opening tag in the file. */
  position: Position;
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
  // Blocks are met in order, so lines are counted forward from the last one: one pass over the body at most.
  let line = 0;
  let lineStart = 0;
  const positionAt = (offset: number): Position => {
    for (let nl = body.indexOf("\n", lineStart); nl !== -1 && nl < offset; nl = body.indexOf("\n", lineStart)) {
      line++;
      lineStart = nl + 1;
    }
    return { line: bodyLine + line, col: offset - lineStart + 1 };
  };
  OPEN.lastIndex = 0;
  for (let m = OPEN.exec(body); m !== null; m = OPEN.exec(body)) {
    const tag = m[1] as string;
    if (blocks.has(tag)) continue;
    const start = m.index + m[0].length;
    const end = body.indexOf(`</${tag}>`, start);
    blocks.set(tag, {
      tag,
      content: body.slice(start, end === -1 ? body.length : end),
      position: positionAt(m.index),
      closed: end !== -1,
    });
  }
  return blocks;
}

/** Lower-case and fold runs of white space, for phrase matching that ignores case and spacing. */
export function foldText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}
