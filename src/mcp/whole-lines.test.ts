import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wholeLines } from "./whole-lines.js";

/** Feed `chunks` through wholeLines and gather what comes out, and whether the limit was passed. */
async function through(chunks: Buffer[], limit: number): Promise<{ out: Buffer[]; over: boolean }> {
  let over = false;
  const stream = wholeLines(limit, () => {
    over = true;
  });
  const out: Buffer[] = [];
  stream.on("data", (c: Buffer) => out.push(c));
  const ended = new Promise<void>((resolve) => stream.once("end", () => resolve()));
  for (const c of chunks) stream.write(c);
  stream.end();
  await ended;
  return { out, over };
}

describe("wholeLines", () => {
  it("passes on each whole line as one chunk, however the bytes were split", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.string({ maxLength: 40 }).filter((s) => !s.includes("\n")),
          { maxLength: 8 },
        ),
        fc.array(fc.nat(60), { maxLength: 10 }),
        async (lines, cuts) => {
          const text = Buffer.from(lines.map((l) => `${l}\n`).join(""));
          const at = [...new Set(cuts.map((c) => Math.min(c, text.length)))].sort((a, b) => a - b);
          const chunks = [0, ...at].map((from, i) => text.subarray(from, at[i] ?? text.length)).filter((c) => c.length > 0);
          const { out, over } = await through(chunks, 1024);
          expect(over).toBe(false);
          expect(out.map((c) => c.toString())).toEqual(lines.map((l) => `${l}\n`));
        },
      ),
    );
  });

  it("ends once a line passes the limit without a newline, and passes none of it on", async () => {
    const { out, over } = await through([Buffer.from('{"a":1}\n'), Buffer.alloc(600, 0x20), Buffer.alloc(600, 0x20)], 1000);
    expect(over).toBe(true);
    expect(out.map((c) => c.toString())).toEqual(['{"a":1}\n']);
  });

  it("looks at each byte once: 200,000 one-byte chunks of one line are joined once", async () => {
    const chunks = Array.from({ length: 200_000 }, () => Buffer.from(" "));
    const { out } = await through([...chunks, Buffer.from("\n")], 1024 * 1024);
    expect(out).toHaveLength(1);
    expect(out[0]?.length).toBe(200_001);
  });
});
