import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** What bwrap's `--info-fd` wrote: its child's PID and the sandbox's mount namespace. */
export interface SandboxInfo {
  childPid: number;
  mountNamespace: number;
  /** The sandbox's PID namespace (bwrap reports it with --unshare-pid). */
  pidNamespace?: number;
}

/** Read bwrap's `--info-fd` output, or undefined when bwrap never made the sandbox (it failed before, or wrote nothing). */
export function readSandboxInfo(file: string): SandboxInfo | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  if (text.trim() === "") return undefined;
  const info = JSON.parse(text) as Record<string, unknown>;
  const childPid = info["child-pid"];
  const mountNamespace = info["mnt-namespace"];
  if (!Number.isSafeInteger(childPid) || !Number.isSafeInteger(mountNamespace))
    throw new Error(`bwrap's sandbox information in ${file} names no child PID and mount namespace`);
  const pidNamespace = info["pid-namespace"];
  return {
    childPid: childPid as number,
    mountNamespace: mountNamespace as number,
    ...(Number.isSafeInteger(pidNamespace) ? { pidNamespace: pidNamespace as number } : {}),
  };
}

/**
 * The PIDs of the processes in mount namespace `ns` now. A process whose
 * main thread has ended while another thread runs on (its leader a zombie,
 * `/proc/PID/ns` unreadable) is found by its threads, under
 * `/proc/PID/task`; a process that is gone, or wholly a zombie, has none.
 */
export function processesIn(ns: number): number[] {
  const want = `mnt:[${ns}]`;
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    if (inNamespace(name, want)) pids.push(Number(name));
  }
  return pids;
}

/** Whether process `pid`, or one of its live threads, is in mount namespace `want` (`mnt:[N]`). */
function inNamespace(pid: string, want: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`) === want;
  } catch {
    // The leader is gone or a zombie: a thread may live on.
  }
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  return tasks.some((tid) => {
    try {
      return readlinkSync(`/proc/${pid}/task/${tid}/ns/mnt`) === want;
    } catch {
      return false;
    }
  });
}

/**
 * Kill every process still in the sandbox (its mount namespace) and wait
 * until none is left: SIGKILL each one seen, sweep again, until a sweep
 * finds none. A confined process cannot leave that namespace (no
 * capability, no new user namespace), so a process it started in a session
 * of its own, in the background, is found too. Returns how many it found,
 * not counting bwrap's own first process (`childPid`, the namespace's init):
 * bwrap reports the command's end before that init has left, so it is often
 * still there, about to go, when nothing the command started is.
 */
export function reapSandbox(info: SandboxInfo): number {
  // Every process found there but bwrap's init counts, killed by us or with the init (its death ends the whole
  // PID namespace, so whichever is killed first, the rest may be gone before their own kill).
  const found = new Set<number>();
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const left = processesIn(info.mountNamespace);
    if (left.length === 0) return found.size;
    for (const pid of left) {
      if (pid !== info.childPid) found.add(pid);
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone between the sweep and the kill
      }
    }
    // A killed process takes a moment to leave its namespaces; the next sweep waits for it.
    Atomics.wait(pause, 0, 0, 5);
  }
}
