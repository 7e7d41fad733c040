import { closeSync, constants, type Dirent, fstatSync, readFileSync, realpathSync } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import { type HandoffSource, MAX_RECORD_BYTES, type SourceText } from "../handoff/handoff-source.js";
import { requireHandoffFolder } from "../handoff/hash-handoff.js";
import type { GateHome } from "../home/gate-home.js";
import { openBeneath, requireOpenedBeneath } from "../input/open-beneath.js";
import { describeFileKind } from "../input/read-regular-file.js";
import { isWithin } from "../input/resolve-real-path.js";

/** How many files are stat'ed or read at once: the event loop is never held for more than one such batch. */
const BATCH = 64;

/** The files a format may read as text (records and Markdown): read ahead, off the event loop. */
const TEXT_FILE = /\.(json|jsonl|md|markdown|ya?ml|txt)$/i;

/**
 * The live handoff folder as a source for readiness, read in place — no
 * copy — with every step asynchronous, so a folder of 20,000 files never
 * holds the server's event loop: the real root is resolved once and checked
 * (`confine`, never the gate home), the folder is listed with links and
 * special files refused, link counts are taken in batches, and each text
 * file a format may read is opened beneath the real root (a folder swapped
 * for a link meanwhile is refused) and read ahead, within the record limit.
 */
export async function liveHandoffSource(home: GateHome, dir: string, confine: (realRoot: string) => void): Promise<HandoffSource> {
  requireHandoffFolder(dir);
  const root = realpathSync(dir);
  confine(root);
  const homes = [home.dir, realOrSelf(home.dir)];
  if (homes.some((h) => isWithin(root, h) || isWithin(h, root)))
    throw new UsageError(`the gate home and the handoff folder ${dir} overlap; keep the gate home out of the agent's folders`);
  const files = await listFiles(root);
  const links = new Map<string, number>();
  const texts = new Map<string, SourceText>();
  for (let i = 0; i < files.length; i += BATCH) {
    await Promise.all(
      files.slice(i, i + BATCH).map(async (rel) => {
        const abs = path.join(root, ...rel.split("/"));
        try {
          links.set(rel, (await lstat(abs)).nlink);
        } catch {
          links.set(rel, 1); // gone since the listing: the read reports it
        }
        if (TEXT_FILE.test(rel)) texts.set(rel, await readText(root, rel));
      }),
    );
  }
  return {
    files,
    // A file not read ahead (a custom format's record of another name) is read when asked, beneath the root all the same.
    read: (file) => texts.get(file) ?? (files.includes(file) ? readTextNow(root, file) : { problem: "missing" }),
    linkCount: (file) => links.get(file) ?? 1,
  };
}

/** Every regular file under `root`, sorted, as listHandoffFiles lists them (links and special files refused), one folder per turn. */
async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const folders = [""];
  while (folders.length > 0) {
    const relDir = folders.pop() as string;
    let entries: Dirent[];
    try {
      entries = await readdir(relDir === "" ? root : path.join(root, ...relDir.split("/")), { withFileTypes: true });
    } catch (error) {
      throw new UsageError(`cannot read ${relDir || "."} in the handoff (${(error as NodeJS.ErrnoException).code}); fix its permissions`);
    }
    for (const e of entries) {
      const rel = relDir === "" ? e.name : `${relDir}/${e.name}`;
      if (e.name.includes("\\") || e.name.includes("\u0000"))
        throw new UsageError(`handoff file name ${JSON.stringify(rel)} contains a backslash or NUL; rename it`);
      if (e.isSymbolicLink())
        throw new UsageError(
          `handoff contains a symbolic link (${rel}); links are refused because they can point outside the folder — copy the file in instead`,
        );
      if (e.isDirectory()) folders.push(rel);
      else if (e.isFile()) out.push(rel);
      else throw new UsageError(`handoff contains ${rel}, which is not a regular file but ${describeFileKind(e)}; remove it`);
    }
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A text file's content, opened beneath the real root without following a link or waiting on a FIFO; too large or unreadable is a problem. */
async function readText(root: string, rel: string): Promise<SourceText> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path.join(root, ...rel.split("/")), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: code === "ELOOP" ? "is a symbolic link; copy the file in instead" : `cannot read (${code}); fix its permissions` };
  }
  try {
    requireOpenedBeneath(handle.fd, root, rel, "handoff");
    const stats = await handle.stat();
    if (!stats.isFile()) return { problem: `is not a regular file but ${describeFileKind(stats)}; remove it` };
    if (stats.size > MAX_RECORD_BYTES)
      return { problem: `over ${MAX_RECORD_BYTES} bytes; keep bulky evidence in separate files and cite them` };
    return { text: await handle.readFile("utf8") };
  } catch (error) {
    if (!(error as NodeJS.ErrnoException).code) throw error;
    return { problem: `cannot read (${(error as NodeJS.ErrnoException).code}); fix its permissions` };
  } finally {
    await handle.close();
  }
}

function readTextNow(root: string, rel: string): SourceText {
  let fd: number;
  try {
    fd = openBeneath(root, rel, "handoff");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!code) throw error;
    return { problem: code === "ELOOP" ? "is a symbolic link; copy the file in instead" : `cannot read (${code}); fix its permissions` };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { problem: `is not a regular file but ${describeFileKind(stats)}; remove it` };
    if (stats.size > MAX_RECORD_BYTES)
      return { problem: `over ${MAX_RECORD_BYTES} bytes; keep bulky evidence in separate files and cite them` };
    return { text: readFileSync(fd, "utf8") };
  } finally {
    closeSync(fd);
  }
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
