import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";

/** Whether this system has Linux's /proc (then a process is known by its PID, start time and boot). */
export function hasProcFs(): boolean {
  return existsSync("/proc/self/stat");
}

/** The fields of /proc/PID/stat after the command name (field 3 on), or undefined when the process is gone. */
export function statFields(pid: number | "self"): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name (field 2) is in parentheses and may hold spaces and parentheses: the fields start after the last `)`.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** The kernel's ID of this boot (Linux), or null where it cannot be read (some containers). */
export function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** When `pid` started (field 22 of /proc/PID/stat: clock ticks since boot), or null when it is gone or unreadable. */
export function processStart(pid: number): string | null {
  const start = statFields(pid)?.[19];
  return start !== undefined && /^[0-9]{1,20}$/.test(start) ? start : null;
}

/**
 * How an entry's name says which process made it, beside its PID: `START-BOOT` (START the process's start time,
 * BOOT the first 8 hex digits of the SHA-256 of the boot ID, of "" where there is none). A PID the system hands to
 * another process after the writer died has another start time (or boot), so that process is not taken for it.
 */
export const IDENTITY_TAG = "\\d{1,20}-[0-9a-f]{8}";

let bootTag: string | undefined;

function tagFor(start: string): string {
  bootTag ??= createHash("sha256")
    .update(bootId() ?? "")
    .digest("hex")
    .slice(0, 8);
  return `${start}-${bootTag}`;
}

/** The identity tag of `pid` now (see IDENTITY_TAG), or undefined where there is no /proc or the process is gone. */
export function identityTagOf(pid: number = process.pid): string | undefined {
  if (!hasProcFs()) return undefined;
  const start = processStart(pid);
  return start === null ? undefined : tagFor(start);
}

/** `-TAG`, this process's identity tag (see IDENTITY_TAG) as a name's last part, or "" where it has none (no /proc). */
export function identitySuffix(): string {
  const tag = identityTagOf();
  return tag === undefined ? "" : `-${tag}`;
}
