import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { IntegrityError } from "../errors/errors.js";
import { DIFF_BUDGET } from "../handoff/diff-within-budget.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { blobPath } from "../home/frozen-bytes.js";
import { type GateHome, openGateHome } from "../home/gate-home.js";
import { describeDiffNotShown, describeNotWhole, presentFiles, SHOW_BUDGET } from "./present-files.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function home(): GateHome {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-present-files-"));
  dirs.push(dir);
  return openGateHome(path.join(dir, "home"), { create: true });
}

/** Keep `bytes` in the home's frozen store as the gate does, and return the manifest entry for them at `rel`. */
function frozen(h: GateHome, rel: string, bytes: Buffer | string): ManifestEntry {
  const b = Buffer.from(bytes);
  const sha256 = createHash("sha256").update(b).digest("hex");
  const file = blobPath(h, sha256);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, b);
  return { path: rel, size: b.length, sha256 };
}

describe("presentFiles", () => {
  it("shows files whole while they fit, the next by its head, and after the total only by path, size and sha256", async () => {
    const h = home();
    const files = [frozen(h, "a.txt", "a".repeat(80)), frozen(h, "b.txt", "b".repeat(60)), frozen(h, "c.txt", "c".repeat(50))];
    files.push(frozen(h, "d.txt", "d".repeat(5)));
    const shown = await presentFiles(h, files, undefined, { fileBytes: 100, headBytes: 10, totalBytes: 150 });
    expect(shown.map((f) => [f.path, f.shown, f.shownBytes, f.text])).toEqual([
      ["a.txt", "whole", 80, "a".repeat(80)],
      ["b.txt", "whole", 60, "b".repeat(60)],
      ["c.txt", "head", 10, "c".repeat(10)],
      ["d.txt", "none", 0, null],
    ]);
    const d = shown[3] as (typeof shown)[number];
    expect(d.cut).toEqual({ by: "total", limit: 150 });
    expect(describeNotWhole(d)).toBe(
      `Not shown: none of its 5 bytes are shown, because the 150 bytes one presentation shows were spent on the files before it. All of it is in the gate home at blobs/${d.sha256.slice(0, 2)}/${d.sha256} (sha256 ${d.sha256}); after admission, twinlock checkout writes a read-only copy of every byte.`,
    );
    expect(describeNotWhole(shown[0] as (typeof shown)[number])).toBeNull();
  });

  it("shows the head of a large text file as text, without a character its end would cut in two", async () => {
    const h = home();
    const f = frozen(h, "notes.md", "é".repeat(SHOW_BUDGET.fileBytes));
    const [shown] = await presentFiles(h, [f], undefined);
    // 64 KiB of two-byte characters ends on a whole one; one byte more would not.
    expect(shown).toMatchObject({ shown: "head", shownBytes: SHOW_BUDGET.headBytes, cut: { by: "file", limit: SHOW_BUDGET.fileBytes } });
    expect(shown?.text).toBe("é".repeat(SHOW_BUDGET.headBytes / 2));
    const [odd] = await presentFiles(h, [f], undefined, { ...SHOW_BUDGET, headBytes: 7 });
    expect(odd?.text).toBe("ééé");
  });

  it("shows a large binary file by the lossy view of its head only", async () => {
    const h = home();
    const bytes = Buffer.alloc(SHOW_BUDGET.fileBytes + 1, 0);
    const [shown] = await presentFiles(h, [frozen(h, "data.bin", bytes)], undefined);
    expect(shown).toMatchObject({ shown: "head", text: null, diff: null });
    expect(shown?.lossy).toHaveLength(SHOW_BUDGET.headBytes);
  });

  it("shows a changed file over the diff's byte limit whole, said too large to diff with each revision's size and sha256", async () => {
    const h = home();
    const old = frozen(h, "log.txt", `${"x\n".repeat(DIFF_BUDGET.maxBytes / 2)}old\n`);
    const now = frozen(h, "log.txt", `${"x\n".repeat(DIFF_BUDGET.maxBytes / 2)}new\n`);
    const [shown] = await presentFiles(h, [now], [old]);
    expect(shown).toMatchObject({ change: "changed", shown: "whole", diff: null });
    expect(shown?.diffNotShown).toEqual({
      reason: "bytes",
      limit: DIFF_BUDGET.maxBytes,
      found: old.size,
      before: { size: old.size, sha256: old.sha256 },
      after: { size: now.size, sha256: now.sha256 },
    });
    expect(describeDiffNotShown(shown as NonNullable<typeof shown>, 2)).toBe(
      `Too large to diff: a revision is ${old.size} bytes, over the ${DIFF_BUDGET.maxBytes}-byte diff limit. Revision 1 is ${old.size} bytes, sha256 ${old.sha256}; revision 2 is ${now.size} bytes, sha256 ${now.sha256}.`,
    );
  });

  it("diffs a small change against the previous revision", async () => {
    const h = home();
    const [shown] = await presentFiles(h, [frozen(h, "r.md", "one\nthree\n")], [frozen(h, "r.md", "one\ntwo\n")]);
    expect(shown?.diff).toBe("--- a/r.md\n+++ b/r.md\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n");
    expect(shown?.diffNotShown).toBeUndefined();
  });

  it("for any files and budget, shows within the total, whole or marked as a part, and never a part for the whole", async () => {
    const h = home();
    const file = fc.record({ bytes: fc.string({ maxLength: 120, unit: "binary" }), binary: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(
        fc.array(file, { maxLength: 8 }),
        fc.record({ fileBytes: fc.nat(100), headBytes: fc.nat(40), totalBytes: fc.nat(300) }),
        async (specs, budget) => {
          const contents = specs.map((x) => (x.binary ? Buffer.concat([Buffer.from(x.bytes), Buffer.from([0])]) : Buffer.from(x.bytes)));
          const files = contents.map((c, i) => frozen(h, `f${i}`, c));
          const shown = await presentFiles(h, files, undefined, budget);
          expect(shown.reduce((n, f) => n + f.shownBytes, 0)).toBeLessThanOrEqual(budget.totalBytes);
          shown.forEach((f, i) => {
            const c = contents[i] as Buffer;
            if (f.shown === "whole") {
              expect(f.shownBytes).toBe(c.length);
              expect(describeNotWhole(f)).toBeNull();
              if (f.text !== null) expect(Buffer.from(f.text)).toEqual(c);
            } else {
              expect(f.shownBytes).toBeLessThan(c.length + (c.length === 0 ? 1 : 0));
              expect(describeNotWhole(f)).toContain(`sha256 ${f.sha256}`);
              // What is shown of a part is the file's own first bytes.
              if (f.text !== null) expect(c.subarray(0, Buffer.byteLength(f.text)).toString("utf8")).toBe(f.text);
            }
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it("refuses as damaged a frozen file whose stored size is not the manifest's, even when only its head is read", async () => {
    const h = home();
    const f = frozen(h, "big.txt", "y".repeat(SHOW_BUDGET.fileBytes + 10));
    writeFileSync(blobPath(h, f.sha256), "short");
    await expect(presentFiles(h, [f], undefined)).rejects.toThrow(IntegrityError);
    await expect(presentFiles(h, [f], undefined)).rejects.toThrow(/are damaged \(size 5, frozen 1048586\)/);
  });
});
