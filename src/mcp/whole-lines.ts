import { Transform, type TransformCallback } from "node:stream";

/**
 * A stream that passes on whole lines only, each line (with its newline)
 * as one chunk, and ends with `onOverLimit` once a line grows past `limit`
 * bytes without ending. Each byte is looked at once: the MCP SDK's stdio
 * reader joins and rescans everything it holds on every chunk, which costs
 * time quadratic in a long line's length (an 11 MiB line took 9 s of CPU
 * before the SDK refused it); given one chunk per message, it does one join
 * and one scan each.
 */
export function wholeLines(limit: number, onOverLimit: () => void): Transform {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let over = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (over) return done();
      let from = 0;
      for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
        const part = chunk.subarray(from, nl + 1);
        this.push(held.length === 0 ? part : Buffer.concat([...held, part]));
        held = [];
        heldBytes = 0;
        from = nl + 1;
      }
      const rest = chunk.subarray(from);
      if (rest.length > 0) {
        held.push(rest);
        heldBytes += rest.length;
      }
      if (heldBytes > limit) {
        over = true;
        held = [];
        onOverLimit();
        this.push(null);
      }
      done();
    },
    flush(done: TransformCallback) {
      if (!over && heldBytes > 0) this.push(Buffer.concat(held));
      done();
    },
  });
}
