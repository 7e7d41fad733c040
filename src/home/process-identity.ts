import { isProcessAlive } from "../store/is-process-alive.js";
import { bootId, hasProcFs, processStart, statFields } from "../store/process-start.js";
import type { BindingProcess } from "./session-binding.js";

/** Whether this system has Linux's /proc (see `hasProcFs` of src/store/process-start.ts). */
export { hasProcFs };

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
  return { pid, start: processStart(pid), boot_id: bootId() };
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
