import { spawn } from "node:child_process";
import type { Writable } from "node:stream";

/**
 * The watchdog's program (run by `node -e`, so it needs no file of its
 * own): it waits for its stdin to end. A line `done` first means exec
 * reaped the sandbox itself and it exits. An end without it means exec is
 * gone, however it died (SIGKILL included): it then kills every process in
 * the sandbox's mount namespace (bwrap's `--info-fd` file names it), sweeping
 * until none is left, removes exec's scratch folder, and exits. A confined
 * process cannot signal it (exec's seccomp filter protects its PID), and it
 * is in a session of its own, so a terminal's ^C or hang-up does not end it.
 */
const PROGRAM = String.raw`
const fs = require("node:fs");
const [info, scratch] = process.argv.slice(1);
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
// A process whose main thread ended while another runs on is found by its threads (see reap-sandbox.ts).
const inNamespace = (pid, want) => {
  try { return fs.readlinkSync("/proc/" + pid + "/ns/mnt") === want; } catch {}
  let tasks;
  try { tasks = fs.readdirSync("/proc/" + pid + "/task"); } catch { return false; }
  return tasks.some((t) => { try { return fs.readlinkSync("/proc/" + pid + "/task/" + t + "/ns/mnt") === want; } catch { return false; } });
};
let said = "";
process.stdin.on("data", (d) => { said += d; if (said.length > 64) said = said.slice(-64); });
process.stdin.on("error", () => {});
process.stdin.on("close", () => {
  if (/(^|\n)done\n/.test(said)) process.exit(0);
  let ns;
  // bwrap may be writing the file as exec dies: a second for it.
  for (let i = 0; i < 40 && ns === undefined; i++) {
    try {
      const n = JSON.parse(fs.readFileSync(info, "utf8"))["mnt-namespace"];
      if (Number.isSafeInteger(n)) ns = n;
    } catch {}
    if (ns === undefined) pause(25);
  }
  if (ns !== undefined) {
    const want = "mnt:[" + ns + "]";
    for (;;) {
      let left = 0;
      for (const name of fs.readdirSync("/proc")) {
        if (!/^[0-9]+$/.test(name)) continue;
        if (!inNamespace(name, want)) continue;
        left++;
        try { process.kill(Number(name), "SIGKILL"); } catch {}
      }
      if (left === 0) break;
      pause(5);
    }
  }
  try { fs.rmSync(scratch, { recursive: true, force: true }); } catch {}
  process.exit(0);
});
`;

/** The watchdog of one sandbox: its PID (for exec's seccomp filter), and how exec tells it the sandbox is reaped already. */
export interface Watchdog {
  pid: number;
  /** Say `done` and close its stdin: it exits without touching anything. */
  dismiss(): void;
}

/**
 * Start the watchdog for the sandbox whose bwrap writes `infoFile`, in
 * exec's scratch folder `scratch`. Its stdin is a pipe only exec holds (the
 * descriptor is close-on-exec, so the sandbox never has it): the pipe ends
 * when exec does.
 */
export function startWatchdog(infoFile: string, scratch: string): Watchdog {
  const child = spawn(process.execPath, ["-e", PROGRAM, infoFile, scratch], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
    // Nothing of the caller's environment: NODE_OPTIONS could preload code into it.
    env: {},
  });
  const stdin = child.stdin as Writable & { unref?: () => void };
  stdin.on("error", () => {});
  stdin.unref?.();
  child.unref();
  if (child.pid === undefined) throw new Error("the sandbox's watchdog could not be started");
  return {
    pid: child.pid,
    dismiss: () => {
      stdin.end("done\n");
    },
  };
}
