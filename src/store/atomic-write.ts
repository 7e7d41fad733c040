import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { loadNodeCrypto } from "../crypto/load-node-crypto.js";
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
  const fd = openSync(tmp, "wx", mode);
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(tmp);
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (error) {
    unlinkSync(tmp);
    throw error;
  }
  fsyncDir(dir);
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
