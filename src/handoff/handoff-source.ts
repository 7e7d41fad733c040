import { closeSync, fstatSync, lstatSync, readFileSync } from "node:fs";
import path from "node:path";
import { BUDGETS } from "../input/budgets.js";
import { openRegularFile, readFailureCode } from "../input/read-regular-file.js";
import { listHandoffFiles } from "./hash-handoff.js";

/** Largest record or Markdown file read (the handoff record budget, src/input/budgets.ts). */
export const MAX_RECORD_BYTES = BUDGETS.handoffRecord.bytes;

/** A file's text, or why it cannot be used. */
export type SourceText = { text: string; problem?: undefined } | { problem: string };

/**
 * The files of a handoff, wherever they are (the live folder, or the frozen
 * bytes in the gate home): what a format adapter reads. `read` is called by
 * whoever needs a file; a folder's source keeps what it read within a bound
 * (`SOURCE_CACHE`).
 */
export interface HandoffSource {
  /** Every file, as POSIX paths relative to the handoff, sorted. */
  files: string[];
  read(file: string): SourceText;
  /** How many names each file has on its disk, when a folder is read: a freeze refuses a file with a second hard link. */
  linkCount?(file: string): number;
  /** What a folder's source keeps of the files it read now (within `SOURCE_CACHE`). */
  cached?(): { files: number; chars: number };
}

/** A source over texts already read (the frozen bytes, or a test). */
export function sourceOfTexts(texts: ReadonlyMap<string, string | Buffer>): HandoffSource {
  const files = [...texts.keys()].sort();
  return {
    files,
    read(file) {
      const t = texts.get(file);
      if (t === undefined) return { problem: "missing" };
      if (typeof t === "string") return { text: t };
      if (t.length > MAX_RECORD_BYTES) return { problem: overRecordBudget(t.length) };
      return { text: t.toString("utf8") };
    },
  };
}

/**
 * What a folder's source keeps of the files it read: at most this many files and this many characters of their
 * text, the least recently read let go first (read again if asked for again); a file larger than the characters
 * is never kept. A handoff of 20,000 Markdown files of up to 16 MiB each is read one file at a time, not held whole.
 */
export const SOURCE_CACHE = { files: 256, chars: 64 * 1024 * 1024 };

/**
 * The live handoff folder as a source. Listing refuses links and special
 * files (a UsageError at once); each listed file is read by `readOne` (once while the source keeps it, see
 * `SOURCE_CACHE`)
 * (by default opened again without following a link and without blocking,
 * so one swapped in since is refused instead of waited on); a file the
 * listing did not find is missing.
 */
export function folderSource(
  dir: string,
  readOne: (root: string, file: string) => SourceText = (root, file) => readRecordText(path.join(root, ...file.split("/"))),
): HandoffSource {
  const root = path.resolve(dir);
  const files = listHandoffFiles(root);
  const listed = new Set(files);
  const cache = new Map<string, SourceText>();
  let cachedChars = 0;
  const charsOf = (t: SourceText) => ("text" in t && t.text !== undefined ? t.text.length : (t.problem?.length ?? 0));
  return {
    files,
    read(file) {
      if (!listed.has(file)) return { problem: "missing" };
      const kept = cache.get(file);
      if (kept) {
        // The most recently read last: the first in the map is the one let go next.
        cache.delete(file);
        cache.set(file, kept);
        return kept;
      }
      const got = readOne(root, file);
      const chars = charsOf(got);
      if (chars > SOURCE_CACHE.chars) return got;
      cache.set(file, got);
      cachedChars += chars;
      while (cache.size > SOURCE_CACHE.files || cachedChars > SOURCE_CACHE.chars) {
        const [oldest, text] = cache.entries().next().value as [string, SourceText];
        cache.delete(oldest);
        cachedChars -= charsOf(text);
      }
      return got;
    },
    cached() {
      return { files: cache.size, chars: cachedChars };
    },
    linkCount(file) {
      try {
        return lstatSync(path.join(root, ...file.split("/"))).nlink;
      } catch {
        return 1; // gone since the listing: the read reports it
      }
    },
  };
}

/** A record's size over the byte budget, named as every budget refusal names it: what was found and the limit. */
function overRecordBudget(size: number): string {
  return `${size.toLocaleString("en-US")} bytes, over the ${MAX_RECORD_BYTES.toLocaleString("en-US")}-byte limit for a handoff record`;
}

/** A record file's text, or the problem that stops it being read (too large, unreadable). */
function readRecordText(abs: string): SourceText {
  let fd: number;
  try {
    fd = openRegularFile(abs, "handoff record", { noFollow: true, fix: "replace it with the JSON record file, or remove it" });
  } catch (error) {
    const code = readFailureCode(error);
    if (code === undefined) throw error;
    return { problem: `cannot read (${code}); fix its permissions` };
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_RECORD_BYTES) return { problem: `${overRecordBudget(size)}; keep bulky evidence in separate files and cite them` };
    return { text: readFileSync(fd, "utf8") };
  } catch (error) {
    return { problem: `cannot read (${readFailureCode(error) ?? "error"}); fix its permissions` };
  } finally {
    closeSync(fd);
  }
}
