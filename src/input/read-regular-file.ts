import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats, statSync } from "node:fs";
import { UsageError } from "../errors/errors.js";
import { requirePlainPath } from "./parse-input.js";

/** How to open a path that must be a regular file. */
export interface OpenRegularFileOptions {
  /** Refuse a symbolic link instead of following it (lstat first, then open with O_NOFOLLOW). */
  noFollow?: boolean;
  /**
   * The caller has just looked at the path and seen a regular file (the type
   * in its folder's entry, from `readdir`): that stands for the look before
   * opening. The descriptor is still checked after opening, as always.
   */
  seenRegular?: boolean;
  /** What the reader should do, ending every error line; defaults depend on the failure. */
  fix?: string;
}

/** How to read a path that must be a regular file. */
export interface ReadRegularFileOptions extends OpenRegularFileOptions {
  /** Refuse a file larger than this many bytes, naming its size and the limit. */
  maxBytes?: number;
}

/** The file-type tests of `fs.Stats`, which `fs.Dirent` has too. */
type FileTypeTests = Pick<
  Stats,
  "isFile" | "isDirectory" | "isSymbolicLink" | "isFIFO" | "isSocket" | "isCharacterDevice" | "isBlockDevice"
>;

/** The kind of a file in words for an error line, e.g. "a FIFO (named pipe)". */
export function describeFileKind(stats: FileTypeTests): string {
  if (stats.isFile()) return "a regular file";
  if (stats.isDirectory()) return "a folder";
  if (stats.isSymbolicLink()) return "a symbolic link";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  return "a special file of unknown kind";
}

/**
 * Open `file` for reading and return the descriptor of a regular file, or
 * throw a one-line UsageError. The path is looked at first (or the caller
 * has just seen it, see `seenRegular`), so a FIFO,
 * socket, device or folder is refused without being opened (opening a
 * device can have effects; opening a FIFO waits for a writer). The open
 * itself is non-blocking and the descriptor is checked again with fstat, so
 * a FIFO swapped in between is refused at once too. A refusal names the
 * kind of file and has no `cause`; a failed stat or open keeps Node's error
 * (its `code`, e.g. ENOENT) as `cause`. The caller closes the descriptor.
 */
export function openRegularFile(file: string, what: string, options: OpenRegularFileOptions = {}): number {
  return openChecked(file, what, options).fd;
}

/** `openRegularFile`, also giving the opened file's stats (so a caller need not ask again). */
export function openRegularFileWithStats(file: string, what: string, options: OpenRegularFileOptions = {}): { fd: number; stats: Stats } {
  return openChecked(file, what, options);
}

/**
 * The whole content of the regular file `file`, read to its end (a file whose
 * reported size is 0, as in /proc, is still read), or a one-line UsageError:
 * not a regular file (see `openRegularFile`), cannot be read, or larger than
 * `maxBytes`.
 */
export function readRegularFile(file: string, what: string, options: ReadRegularFileOptions = {}): Buffer {
  const { fd, stats } = openChecked(file, what, options);
  try {
    const limit = options.maxBytes ?? Number.POSITIVE_INFINITY;
    if (stats.size > limit) throw tooLarge(file, what, `is ${stats.size} bytes`, limit, options.fix);
    // One byte past the limit is enough to know the file grew over it while being read.
    const cap = limit + 1;
    let buffer = Buffer.allocUnsafe(Math.min(Math.max(stats.size + 1, 8192), cap));
    let total = 0;
    for (;;) {
      if (total === buffer.length) {
        if (buffer.length >= cap) break;
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, cap));
        buffer.copy(bigger, 0, 0, total);
        buffer = bigger;
      }
      let n: number;
      try {
        n = readSync(fd, buffer, total, buffer.length - total, total);
      } catch (error) {
        throw failure(error, file, what, options);
      }
      if (n === 0) break;
      total += n;
    }
    if (total > limit) throw tooLarge(file, what, "grew while being read", limit, options.fix);
    return buffer.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}

/**
 * The `code` (ENOENT, EACCES, …) of the Node error behind a UsageError of
 * `openRegularFile` or `readRegularFile`; undefined for a refusal by kind or
 * size, which has no such cause. Lets a caller report an unreadable file as a
 * finding while still stopping at a FIFO.
 */
export function readFailureCode(error: unknown): string | undefined {
  const cause = error instanceof UsageError ? error.cause : error;
  return (cause as NodeJS.ErrnoException | undefined)?.code;
}

function openChecked(file: string, what: string, options: OpenRegularFileOptions): { fd: number; stats: Stats } {
  requirePlainPath(file, what);
  if (!options.seenRegular) {
    let seen: Stats;
    try {
      seen = options.noFollow ? lstatSync(file) : statSync(file);
    } catch (error) {
      throw failure(error, file, what, options);
    }
    if (!seen.isFile()) throw notRegular(file, what, seen, options.fix);
  }
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | (options.noFollow ? constants.O_NOFOLLOW : 0);
  let fd: number;
  try {
    fd = openSync(file, flags);
  } catch (error) {
    throw failure(error, file, what, options);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw notRegular(file, what, stats, options.fix);
    return { fd, stats };
  } catch (error) {
    closeSync(fd);
    throw error instanceof UsageError ? error : failure(error, file, what, options);
  }
}

/** What to do about each failed open, when the caller gave no `fix`. */
const FIX_BY_CODE: Record<string, string> = {
  ENOENT: "check the path",
  EACCES: "fix its permissions",
  EPERM: "fix its permissions",
  ENAMETOOLONG: "give a shorter path",
  ENOTDIR: "a part of the path is not a folder; check the path",
  ELOOP: "the path is a symbolic link (or a loop of them); give the real file",
  EMFILE: "too many files are open; close some programs and run again",
  ENFILE: "too many files are open; close some programs and run again",
  ENXIO: "it is a special file; give a regular file",
};

function failure(error: unknown, file: string, what: string, options: OpenRegularFileOptions): UsageError {
  const code = (error as NodeJS.ErrnoException).code ?? "error";
  const fix = options.fix ?? FIX_BY_CODE[code] ?? "check the path and its permissions";
  const head = code === "ENOENT" ? `${what} ${file} does not exist (ENOENT)` : `cannot read ${what} ${file} (${code})`;
  return new UsageError(`${head}; ${fix}`, { cause: error });
}

function notRegular(file: string, what: string, stats: FileTypeTests, fix = "give a regular file"): UsageError {
  return new UsageError(`${what} ${file} is ${describeFileKind(stats)}, not a regular file; ${fix}`);
}

function tooLarge(file: string, what: string, size: string, limit: number, fix = "check that it is the right file"): UsageError {
  return new UsageError(`${what} ${file} ${size}, over the ${limit}-byte limit; ${fix}`);
}
