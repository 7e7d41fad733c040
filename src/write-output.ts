import { writeSync } from "node:fs";

/**
 * Write all of `text` to file descriptor `fd` (1 or 2) at once. Writing to
 * the descriptor, not through `process.stdout`, spares every command the
 * stream machinery Node loads for it (a few milliseconds of a call that sits
 * in front of every agent tool call). A descriptor left non-blocking by
 * whoever started us is waited on, not dropped.
 */
export function writeOutput(fd: 1 | 2, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let done = 0;
  while (done < bytes.length) {
    try {
      done += writeSync(fd, bytes, done, bytes.length - done);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") {
        Atomics.wait(WAIT, 0, 0, 2);
        continue;
      }
      // The reader went away (a closed pipe): nothing more can be said to it.
      if (code === "EPIPE") return;
      throw error;
    }
  }
}

const WAIT = new Int32Array(new SharedArrayBuffer(4));
