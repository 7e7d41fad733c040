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
 * bytes in the gate home): what a format adapter reads. `read` is called at
 * most once per file by whoever needs it, and caches.
 */
export interface HandoffSource {
  /** Every file, as POSIX paths relative to the handoff, sorted. */
  files: string[];
  read(file: string): SourceText;
  /** How many names each file has on its disk, when a folder is read: a freeze refuses a file with a second hard link. */
  linkCount?(file: string): number;
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
 * The live handoff folder as a source. Listing refuses links and special
 * files (a UsageError at once); each listed file is read once, by `readOne`
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
  return {
    files,
    read(file) {
      if (!listed.has(file)) return { problem: "missing" };
      let got = cache.get(file);
      if (!got) {
        got = readOne(root, file);
        cache.set(file, got);
      }
      return got;
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
