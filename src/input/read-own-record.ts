import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from "node:fs";

/**
 * The text and stats of `file` when it is a regular file of at most `maxBytes`, read through one descriptor opened
 * without following a link; undefined when it is missing, a link, not a regular file, too large or unreadable. For
 * the records the gate writes and reads back quietly (a session binding, a sandbox record), where any of those means
 * "no record" and the caller refuses what needed one. Imports node:fs alone, so the hook's start-up does not grow.
 */
export function readOwnRecordQuietly(file: string, maxBytes: number): { text: string; stats: Stats } | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    return { text: readFileSync(fd, "utf8"), stats };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
