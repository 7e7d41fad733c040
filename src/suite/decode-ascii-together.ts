import { isAscii } from "node:buffer";

/**
 * The text of each buffer that holds only ASCII (and no NUL byte), decoded in
 * one go; undefined for any other buffer, which its reader decodes (and
 * checks) on its own. One decode makes one large string, which V8 keeps out
 * of the young generation, and each text is a slice of it: a suite's prompt
 * texts are kept for the whole command, and as separate strings of a few
 * kilobytes each, every young-generation collection copied them again.
 */
export function decodeAsciiTogether(buffers: readonly Uint8Array[]): Array<string | undefined> {
  const texts = new Array<string | undefined>(buffers.length).fill(undefined);
  const parts: Uint8Array[] = [];
  const which: number[] = [];
  for (const [i, bytes] of buffers.entries()) {
    if (!isAscii(bytes) || bytes.indexOf(0) !== -1) continue;
    // A NUL byte cannot occur in these buffers, so it separates them.
    if (which.length > 0) parts.push(NUL);
    parts.push(bytes);
    which.push(i);
  }
  if (which.length === 0) return texts;
  const pieces = Buffer.concat(parts).toString("latin1").split("\0");
  for (const [n, i] of which.entries()) texts[i] = pieces[n];
  return texts;
}

const NUL = new Uint8Array([0]);
