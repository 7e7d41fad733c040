import { createHash } from "node:crypto";
import { closeSync, constants, fsyncSync, linkSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { loadNodeCrypto } from "../crypto/load-node-crypto.js";
import { RefusalError } from "../errors/errors.js";
import { removeLeftoversOfDeadWriters } from "./is-process-alive.js";
import { IDENTITY_TAG, identitySuffix } from "./process-start.js";

/** A temporary file's name after `.NAME.`: the writer's PID, a random part and (since tags) its identity tag. */
const TEMP_TAIL = new RegExp(`^(\\d{1,10})\\.[0-9a-f]{12}(?:-(?<tag>${IDENTITY_TAG}))?\\.tmp$`);

/**
 * Replace `file` with `data` so that a crash at any instant leaves either the
 * old or the new file, never a torn one: write a temporary file in the same
 * folder, fsync it, rename it over the target, then fsync the folder so the
 * rename itself survives power loss.
 */
export function atomicWriteFile(file: string, data: string | Uint8Array, mode = 0o644): void {
  const dir = path.dirname(file);
  const tmp = tempFileOf(file);
  writeDurableTemp(tmp, typeof data === "string" ? Buffer.from(data, "utf8") : data, mode, file);
  try {
    renameSync(tmp, file);
  } catch (error) {
    unlinkSync(tmp);
    throw isDiskFull(error) ? diskFullRefusal(error, file) : error;
  }
  fsyncDir(dir);
}

/**
 * Create a new file in `dir` holding `data`, durably, whose name is chosen only once its bytes are durable: write a
 * temporary file, fsync it, then call `nameAt` and rename the file to the name it returns at once, then fsync the
 * folder. So a name made of a monotonic stamp (see queue-lock's `monotonicStamp`) orders the files by the moment each
 * became visible in the folder, not by when its writer began. Returns the name. The temporary file is named as
 * `atomicWriteFile`'s are (after a file named `.new`), so `removeDeadTempFiles(path.join(dir, ".new"))` reclaims it.
 */
export function atomicCreateNamedAtRename(dir: string, data: string, mode: number, nameAt: () => string): string {
  const tmp = tempFileOf(path.join(dir, ".new"));
  writeDurableTemp(tmp, Buffer.from(data, "utf8"), mode, dir);
  const name = nameAt();
  try {
    // A plain rename would replace a file of that name: link fails on one instead (a stamp is unique, but never trusted).
    linkSync(tmp, path.join(dir, name));
  } finally {
    unlinkSync(tmp);
  }
  fsyncDir(dir);
  return name;
}

/** Create `tmp` (never an existing file), write all of `bytes` and fsync it; a full disk is refused naming `where`, and a failed write leaves no file. */
function writeDurableTemp(tmp: string, bytes: Uint8Array, mode: number, where: string): void {
  let fd: number;
  try {
    fd = openSync(tmp, "wx", mode);
  } catch (error) {
    throw isDiskFull(error) ? diskFullRefusal(error, where) : error;
  }
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(tmp);
    throw isDiskFull(error) ? diskFullRefusal(error, where) : error;
  }
  closeSync(fd);
}

/** The temporary file a writer of `file` writes first: in its folder, named so `removeDeadTempFiles` knows whose it is. */
function tempFileOf(file: string): string {
  return path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${loadNodeCrypto().randomBytes(6).toString("hex")}${identitySuffix()}.tmp`,
  );
}

/** Bytes gathered before `atomicWriteChunks` writes them (and lets the event loop run). */
const WRITE_SLICE_BYTES = 256 * 1024;

/**
 * `atomicWriteFile` for a server: the same temporary file, fsync, rename and
 * fsync of the folder, but the text comes as chunks (made one at a time, as
 * the write gets to them) and every write, fsync and rename runs off the
 * event loop, which turns between slices however large the file. Resolves to
 * the sha256 of the bytes written (what a reader of the file will hash).
 */
export async function atomicWriteChunks(file: string, chunks: Iterable<string>, mode = 0o644): Promise<string> {
  const prepared = await prepareAtomicWrite(file, chunks, mode);
  await prepared.commit();
  return prepared.digest;
}

/** A file's new bytes written and fsynced beside it, not yet in its place: `commit` puts them there, `abort` drops them. */
export interface PreparedWrite {
  /** The sha256 of the bytes written. */
  digest: string;
  /**
   * Rename the new bytes over the file and fsync its folder (durable when it resolves). With `syncFolder: false` the
   * folder is not fsynced: the caller makes the rename durable itself (`fsyncDirAsync`), later or at once with other work.
   */
  commit(options?: { syncFolder?: boolean }): Promise<void>;
  /** Remove the new bytes (the file stays as it was). */
  abort(): Promise<void>;
}

/**
 * The first half of `atomicWriteChunks`: the temporary file written and
 * fsynced, off the event loop. Two files that must land in order (a run's
 * checkpoint, then its run file) are prepared at once, so their data's
 * fsyncs overlap, and committed one after the other.
 */
export async function prepareAtomicWrite(file: string, chunks: Iterable<string>, mode = 0o644): Promise<PreparedWrite> {
  const dir = path.dirname(file);
  const tmp = tempFileOf(file);
  const hash = createHash("sha256");
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(tmp, "wx", mode);
  } catch (error) {
    throw isDiskFull(error) ? diskFullRefusal(error, file) : error;
  }
  try {
    let pending: string[] = [];
    let pendingLength = 0;
    const flush = async () => {
      const bytes = Buffer.from(pending.join(""), "utf8");
      pending = [];
      pendingLength = 0;
      hash.update(bytes);
      let written = 0;
      while (written < bytes.length) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten;
    };
    for (const chunk of chunks) {
      pending.push(chunk);
      pendingLength += chunk.length;
      if (pendingLength >= WRITE_SLICE_BYTES) await flush();
    }
    await flush();
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(tmp);
    throw isDiskFull(error) ? diskFullRefusal(error, file) : error;
  }
  await handle.close();
  let settled = false;
  return {
    digest: hash.digest("hex"),
    async commit(options = {}) {
      if (settled) throw new Error(`the write of ${file} was already committed or dropped`);
      settled = true;
      try {
        await rename(tmp, file);
      } catch (error) {
        await unlink(tmp).catch(() => {});
        throw isDiskFull(error) ? diskFullRefusal(error, file) : error;
      }
      if (options.syncFolder !== false) await fsyncDirAsync(dir);
    },
    async abort() {
      if (settled) return;
      settled = true;
      await unlink(tmp).catch(() => {});
    },
  };
}

/** Whether an error is the disk (or the user's disk quota) being full. */
export function isDiskFull(error: unknown): error is NodeJS.ErrnoException {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** The refusal for a write the full disk stopped: what, where, and that the write left nothing of itself behind. */
export function diskFullRefusal(error: NodeJS.ErrnoException, where: string): RefusalError {
  return new RefusalError(
    `the disk holding ${where} is full (${error.code}); the write was undone and nothing of it was kept — free space on that disk (\`twinlock home gc\` collects frozen files no run uses) and run the command again`,
    { code: "DISK_FULL", disk_full: error.code, path: where },
    { cause: error },
  );
}

/**
 * Open `dir` for an fsync: as a folder only (O_DIRECTORY), never blocking
 * (O_NONBLOCK), so a FIFO or device swapped in for the folder (the run
 * file's folder is the agent's) is refused at once, not waited on while a
 * lock is held.
 */
const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK;

/** `fsyncDir` off the event loop. */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const folder = await open(dir, FOLDER_FLAGS);
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * `mkdir -p` that survives power loss: each folder made is fsynced into its parent (a folder that was there is left
 * alone, at the cost of one mkdir). Returns `dir`.
 */
export function mkdirDurable(dir: string, mode = 0o700): string {
  const first = mkdirSync(dir, { recursive: true, mode });
  if (first === undefined) return dir;
  for (let made = path.resolve(dir); ; made = path.dirname(made)) {
    fsyncDir(path.dirname(made));
    if (made === path.resolve(first) || made === path.dirname(made)) break;
  }
  return dir;
}

/** fsync a folder so a rename or create inside it is durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, FOLDER_FLAGS);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove the temporary files that writers of `file` killed mid-write left
 * beside it (`atomicWriteFile`'s own naming, from processes that no longer
 * exist). Call it only while holding `file`'s lock, when no writer of it
 * can be between creating and renaming its temporary file.
 */
export function removeDeadTempFiles(file: string): void {
  removeLeftoversOfDeadWriters(path.dirname(file), `.${path.basename(file)}.`, TEMP_TAIL);
}
