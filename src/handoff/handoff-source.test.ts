import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { folderSource, SOURCE_CACHE } from "./handoff-source.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-source-"));
  made.push(dir);
  return dir;
}

describe("a folder's source keeps what it read within its bound", () => {
  it(`keeps at most ${SOURCE_CACHE.files} files however many Markdown files it reads, and reads a file let go again with the same text`, () => {
    const dir = tempDir();
    const count = SOURCE_CACHE.files + 100;
    for (let i = 0; i < count; i++) writeFileSync(path.join(dir, `note-${String(i).padStart(4, "0")}.md`), `note ${i}\n`);
    const source = folderSource(dir);
    for (const file of source.files) expect(source.read(file)).toEqual({ text: `note ${Number(file.slice(5, 9))}\n` });
    expect(source.cached?.().files).toBe(SOURCE_CACHE.files);
    expect(source.read("note-0000.md")).toEqual({ text: "note 0\n" });
    expect(source.cached?.().files).toBe(SOURCE_CACHE.files);
  });

  it(`keeps at most ${SOURCE_CACHE.chars / 1024 ** 2} Mi characters of text when each file is near the record limit`, () => {
    const dir = tempDir();
    // Sparse files of 15 MiB each: six of them are more than the bound.
    for (let i = 0; i < 6; i++) {
      const fd = openSync(path.join(dir, `big-${i}.md`), "w");
      ftruncateSync(fd, 15 * 1024 ** 2);
      closeSync(fd);
    }
    const source = folderSource(dir);
    for (const file of source.files) expect((source.read(file) as { text: string }).text).toHaveLength(15 * 1024 ** 2);
    const kept = source.cached?.() ?? { files: 0, chars: 0 };
    expect(kept.chars).toBeLessThanOrEqual(SOURCE_CACHE.chars);
    expect(kept.files).toBe(4);
  });
});
