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
  const lineStarts = [0];
  for (let i = 0; i < body.length; i++) if (body.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const positionAt = (offset: number): Position => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: bodyLine + lo, col: offset - (lineStarts[lo] as number) + 1 };
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
