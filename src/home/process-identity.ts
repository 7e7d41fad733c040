import { existsSync, readFileSync } from "node:fs";
import { isProcessAlive } from "../store/is-process-alive.js";
import type { BindingProcess } from "./session-binding.js";

/** Whether this system has Linux's /proc (then a process is known by its PID, start time and boot). */
export function hasProcFs(): boolean {
  return existsSync("/proc/self/stat");
}

/** The fields of /proc/PID/stat after the command name (field 3 on), or undefined when the process is gone. */
function statFields(pid: number | "self"): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces and parentheses: the fields start after the last `)`.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** The parent PID of `pid` (Linux; `self`: this process, as its own PID namespace numbers it), or undefined when it cannot be read. */
export function parentOf(pid: number | "self"): number | undefined {
  const f = statFields(pid);
  const ppid = f === undefined ? Number.NaN : Number(f[1]);
  return Number.isInteger(ppid) ? ppid : undefined;
}

/**
 * This process as a binding records it: its PID, and on Linux its start time
 * (field 22 of /proc/PID/stat) and the boot it started in; elsewhere the
 * start is null and the binding holds only while its lease is renewed.
 */
export function processIdentity(pid: number = process.pid): BindingProcess {
  if (!hasProcFs()) return { pid, start: null, boot_id: null };
  const f = statFields(pid);
  const start = f?.[19];
  return { pid, start: start !== undefined && /^[0-9]+$/.test(start) ? start : null, boot_id: bootId() };
}

/**
 * Whether the process a binding records is still that process: alive, and
 * on Linux with the same start time in the same boot (a PID the system gave
 * to another process after the binder died is not it). Where there is no
 * /proc only liveness can be checked; the binding's lease covers the rest.
 */
export function isSameProcess(recorded: BindingProcess): boolean {
  if (!hasProcFs()) return isProcessAlive(recorded.pid);
  if (recorded.start === null) return false;
  // A system without a readable boot ID (some containers) records none, and reads none now: the start time is then
  // compared alone, which a reboot (longer than the lease, which only a live binder renews) cannot make match.
  const now = processIdentity(recorded.pid);
  return now.start === recorded.start && now.boot_id === recorded.boot_id;
}
