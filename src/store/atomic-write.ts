import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { loadNodeCrypto } from "../crypto/load-node-crypto.js";
import { RefusalError } from "../errors/errors.js";
import { removeLeftoversOfDeadWriters } from "./is-process-alive.js";

/**
 * Replace `file` with `data` so that a crash at any instant leaves either the
 * old or the new file, never a torn one: write a temporary file in the same
 * folder, fsync it, rename it over the target, then fsync the folder so the
 * rename itself survives power loss.
 */
export function atomicWriteFile(file: string, data: string | Uint8Array, mode = 0o644): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${loadNodeCrypto().randomBytes(6).toString("hex")}.tmp`);
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let fd: number;
  try {
    fd = openSync(tmp, "wx", mode);
  } catch (error) {
    throw isDiskFull(error) ? diskFullRefusal(error, file) : error;
  }
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(tmp);
    throw isDiskFull(error) ? diskFullRefusal(error, file) : error;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (error) {
    unlinkSync(tmp);
    throw isDiskFull(error) ? diskFullRefusal(error, file) : error;
  }
  fsyncDir(dir);
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
    { disk_full: error.code, path: where },
    { cause: error },
  );
}

/** fsync a folder so a rename or create inside it is durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
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
  removeLeftoversOfDeadWriters(path.dirname(file), `.${path.basename(file)}.`, /^(\d+)\.[0-9a-f]{12}\.tmp$/);
}
