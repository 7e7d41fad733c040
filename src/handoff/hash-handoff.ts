import { createHash } from "node:crypto";
import { closeSync, constants, type Dirent, fstatSync, lstatSync, openSync, read, readdirSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import { hashCanonical } from "../crypto/canonical-hash.js";
import { RefusalError, UsageError } from "../errors/errors.js";
import { requireOpenedBeneath } from "../input/open-beneath.js";
import { requirePlainPath } from "../input/parse-input.js";
import { describeFileKind } from "../input/read-regular-file.js";
import { isWithin } from "../input/resolve-real-path.js";

/** One file of a handoff: POSIX path relative to the handoff folder, byte size, sha256 hex. */
export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

/** A handoff's hash and the manifest it was computed from. */
export interface HandoffDigest {
  hash: string;
  files: ManifestEntry[];
}

/** Version tag inside the hashed manifest, so a format change cannot collide with an old hash. */
export const MANIFEST_FORMAT = "twinlock-handoff/1";

/**
 * What is wrong with a handoff file that has `nlink` names: a second name may
 * be a hard link to a file outside the handoff (a key file the gate can
 * read), which the gate would copy and show. The freeze, the hash and
 * readiness all refuse it in these words.
 */
export function hardLinksProblem(nlink: number): string {
  return `has ${nlink} hard links; a handoff file must be a file of its own — copy it in instead`;
}

const CHUNK = 1024 * 1024;
const PARALLEL_FILES = 4;

/** Largest handoff frozen or re-hashed (all files together); a bigger one is refused, not read for hours. */
export const MAX_HANDOFF_BYTES = 8 * 1024 * 1024 * 1024;

/**
 * Hash a handoff folder per SPEC §4: list every file (symlinks, special files
 * and a symlinked folder are refused), sha256 each, and hash the RFC 8785
 * canonical manifest `{format, files: [{path, size, sha256}]}` sorted by path.
 * Any byte changed, file added, removed or renamed changes the result.
 */
export async function hashHandoff(dir: string, keepApart: readonly string[] = []): Promise<HandoffDigest> {
  // Resolved once, before listing; every file opened is then checked to be under this very path.
  const root = resolveHandoffRoot(dir, keepApart);
  const rel = listHandoffFiles(root);
  const files: ManifestEntry[] = new Array(rel.length);
  const budget = { left: MAX_HANDOFF_BYTES };
  let next = 0;
  const worker = async () => {
    while (next < rel.length) {
      const i = next++;
      const p = rel[i] as string;
      files[i] = { path: p, ...(await hashFile(root, p, budget)) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_FILES, rel.length) }, worker));
  return { hash: manifestHash(files), files };
}

/**
 * The real path of a live handoff folder, by the rules every reader of one
 * obeys (the freeze's copy, admission's and pair-status's re-hash): the
 * folder given is not itself a symbolic link, and neither it, the real path
 * it leads to, nor the real path read from (after `confine` judged it) is
 * inside one of the `keepApart` folders (the gate home, the folders of the
 * keys the gate knows) or holds one. The one real path is returned to be
 * listed and opened beneath, so a link swapped in after the checks leads
 * nowhere. Throws a UsageError naming the folder.
 */
export function resolveHandoffRoot(dir: string, keepApart: readonly string[], confine?: (realRoot: string) => void): string {
  const given = path.resolve(dir);
  requirePlainPath(given, "handoff folder");
  const apart = keepApart.flatMap((f) => [path.resolve(f), realOrSelf(f)]);
  const requireApart = (candidate: string) => {
    const hit = apart.find((f) => isWithin(candidate, f) || isWithin(f, candidate));
    if (hit !== undefined)
      throw new UsageError(
        // The gate's folder is not named: the answer reaches the agent (a status over the API), which must not learn where the home is.
        `the handoff folder ${dir} is, holds or lies inside a folder of the gate's own (its home, or its keys); keep the gate's folders out of the agent's`,
      );
  };
  // By the name given and by where it leads now (a link in the agent's folder into the home), before anything is read.
  requireApart(given);
  requireApart(realOrSelf(given));
  requireHandoffFolder(given);
  let root: string;
  try {
    root = realpathSync(given);
  } catch (error) {
    // The folder was checked a moment ago: a failure now means it is being changed (or swapped) while it is read.
    throw new UsageError(
      `handoff folder ${given} changed while it was read (${(error as NodeJS.ErrnoException).code}); try again once it is left alone`,
    );
  }
  confine?.(root);
  requireApart(root);
  return root;
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The handoff hash of an already computed manifest. */
export function manifestHash(files: readonly ManifestEntry[]): string {
  return hashCanonical({ format: MANIFEST_FORMAT, files });
}

/** Throw a UsageError unless `root` names a real folder (not a symbolic link, not a file). */
export function requireHandoffFolder(root: string): void {
  requirePlainPath(root, "handoff folder");
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(root);
  } catch (error) {
    throw new UsageError(
      `handoff folder ${root} cannot be read (${(error as NodeJS.ErrnoException).code}); give the folder holding the handoff records`,
      { cause: error },
    );
  }
  if (stat.isSymbolicLink()) throw new UsageError(`handoff folder ${root} is a symbolic link; give the real folder`);
  if (!stat.isDirectory()) throw new UsageError(`handoff ${root} is not a folder; give the folder holding the handoff records`);
}

/**
 * Every regular file under `root`, as sorted POSIX relative paths. Throws a
 * UsageError naming the first symlink, special file or unreadable folder.
 */
export function listHandoffFiles(root: string): string[] {
  requireHandoffFolder(root);
  const out: string[] = [];
  const walk = (relDir: string) => {
    const abs = relDir === "" ? root : path.join(root, ...relDir.split("/"));
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch (error) {
      throw new UsageError(`cannot read ${relDir || "."} in the handoff (${(error as NodeJS.ErrnoException).code}); fix its permissions`, {
        cause: error,
      });
    }
    for (const e of entries) {
      const rel = relDir === "" ? e.name : `${relDir}/${e.name}`;
      if (e.name.includes("\\") || e.name.includes("\u0000"))
        throw new UsageError(`handoff file name ${JSON.stringify(rel)} contains a backslash or NUL; rename it`);
      if (e.isSymbolicLink())
        throw new UsageError(
          `handoff contains a symbolic link (${rel}); links are refused because they can point outside the folder — copy the file in instead`,
        );
      if (e.isDirectory()) walk(rel);
      else if (e.isFile()) out.push(rel);
      else throw new UsageError(`handoff contains ${rel}, which is not a regular file but ${describeFileKind(e)}; remove it`);
    }
  };
  walk("");
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * sha256 and size of the handoff file `rel`. The open neither follows a link
 * nor waits (a FIFO swapped in since the listing would otherwise block it
 * until a writer comes), and what was opened must be a regular file before a
 * byte is read. A file under one chunk (a handoff's records, its report) is
 * read at once; a larger one chunk by chunk, the next read under way while
 * the current chunk is hashed, so a large handoff hashes at disk speed.
 */
async function hashFile(root: string, rel: string, budget: { left: number }): Promise<{ size: number; sha256: string }> {
  let fd: number;
  try {
    fd = openSync(
      path.join(root, ...rel.split("/")),
      constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === "ELOOP"
        ? `handoff contains a symbolic link (${rel}); links are refused because they can point outside the folder — copy the file in instead`
        : `cannot read ${rel} in the handoff (${code}); fix its permissions, or hash again if it was being changed`,
      { cause: error },
    );
  }
  try {
    requireOpenedBeneath(fd, root, rel, "handoff");
    const stat = fstatSync(fd);
    if (!stat.isFile())
      throw new UsageError(`handoff contains ${rel}, which is not a regular file but ${describeFileKind(stat)}; remove it`);
    // As the freeze: a second name for the file may be a hard link to one outside the handoff.
    if (stat.nlink > 1) throw new RefusalError(`handoff file ${rel} ${hardLinksProblem(stat.nlink)}`, { attack: "hard-link" });
    const overBudget = () =>
      new RefusalError(`the handoff is over ${MAX_HANDOFF_BYTES} bytes (at ${rel}); keep bulky evidence out of it and cite it by digest`);
    if (stat.size > budget.left) throw overBudget();
    const hash = createHash("sha256");
    let size = 0;
    const add = (chunk: Buffer) => {
      size += chunk.length;
      budget.left -= chunk.length;
      if (budget.left < 0) throw overBudget();
      hash.update(chunk);
    };
    if (stat.size < CHUNK) {
      // A byte more than the size it had (at least 64 KiB): a file that grew since is read on to its end all the same.
      const buffer = Buffer.allocUnsafe(Math.max(stat.size + 1, 64 * 1024));
      for (let n = readSync(fd, buffer, 0, buffer.length, 0); n > 0; n = readSync(fd, buffer, 0, buffer.length, size))
        add(buffer.subarray(0, n));
      return { size, sha256: hash.digest("hex") };
    }
    let buffers: [Buffer, Buffer] = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
    let pending: Promise<number> | undefined = readAt(fd, buffers[0], 0);
    try {
      for (;;) {
        const bytesRead = await pending;
        pending = undefined;
        if (bytesRead === 0) break;
        const current = buffers[0];
        pending = readAt(fd, buffers[1], size + bytesRead);
        add(bytesRead === CHUNK ? current : current.subarray(0, bytesRead));
        buffers = [buffers[1], current];
      }
    } finally {
      // A read still under way when hashing stops (over budget) finishes before the descriptor is closed under it.
      await pending?.catch(() => {});
    }
    return { size, sha256: hash.digest("hex") };
  } finally {
    closeSync(fd);
  }
}

/** Read into all of `buffer` from `position` of `fd` on libuv's threads; resolves to the bytes read. */
function readAt(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, 0, buffer.length, position, (error, n) => (error ? reject(error) : resolve(n))));
}
