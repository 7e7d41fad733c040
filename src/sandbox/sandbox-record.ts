import { readlinkSync, rmSync } from "node:fs";
import type { BindingProcess } from "../home/session-binding.js";
import { readOwnRecordQuietly } from "../input/read-own-record.js";
import { atomicWriteFile } from "../store/atomic-write.js";

/**
 * What exec (or plan) records beside a session's binding once its sandbox
 * is made: the sandbox's PID namespace. Inside it the hook sees only the
 * sandbox's own processes (exec is outside, with no PID there), so its walk
 * up the parents from /proc/self/stat ends at the namespace's first process;
 * the hook then holds the call to be below exec when it runs in this PID
 * namespace, which no process outside the sandbox is in and none inside can
 * leave. The record names the binding's secret digest and process, so a
 * record left by another session never counts.
 */
export interface SandboxRecord {
  format: typeof SANDBOX_RECORD_FORMAT;
  secret_sha256: string;
  process: BindingProcess;
  /** The inode of the sandbox's PID namespace (`pid:[N]` under /proc/PID/ns/pid). */
  pid_namespace: number;
}

export const SANDBOX_RECORD_FORMAT = "twinlock-sandbox/1";

/** The record's file beside the binding's (`KEY.json` → `KEY.sandbox.json`: not a binding's name, so nothing that lists bindings reads it). */
export function sandboxRecordFile(bindingFile: string): string {
  return bindingFile.replace(/\.json$/, ".sandbox.json");
}

/** Write the record as the binding beside it is written: atomic (a reader sees all of it or nothing) and durable, owner-only. */
export function writeSandboxRecord(file: string, record: Omit<SandboxRecord, "format">): void {
  atomicWriteFile(file, `${JSON.stringify({ format: SANDBOX_RECORD_FORMAT, ...record })}\n`, 0o600);
}

/** Remove the record (gone already is fine). */
export function removeSandboxRecord(file: string): void {
  rmSync(file, { force: true });
}

/** The record in `file` (never through a link; at most 4 KiB), or undefined when there is none that reads as one. */
export function readSandboxRecord(file: string): SandboxRecord | undefined {
  const read = readOwnRecordQuietly(file, 4096);
  if (!read) return undefined;
  let r: Partial<SandboxRecord> | null;
  try {
    r = JSON.parse(read.text) as Partial<SandboxRecord> | null;
  } catch {
    return undefined;
  }
  if (
    r === null ||
    typeof r !== "object" ||
    r.format !== SANDBOX_RECORD_FORMAT ||
    typeof r.secret_sha256 !== "string" ||
    !Number.isSafeInteger(r.pid_namespace) ||
    typeof r.process !== "object" ||
    r.process === null
  )
    return undefined;
  return r as SandboxRecord;
}

/** This process's PID namespace inode, or undefined where /proc cannot say. */
export function ownPidNamespace(): number | undefined {
  try {
    const m = /^pid:\[([0-9]+)\]$/.exec(readlinkSync("/proc/self/ns/pid"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
