/**
 * Server processes for the benchmark: started as children (so the load
 * generator never shares their event loop), ready once they print
 * `listening on URL`, and always ended: `stop()` sends SIGTERM and then
 * SIGKILL, and any child still alive when the bench process exits, however
 * it exits, is killed by an 'exit' handler.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const live = new Set();
let exitHookInstalled = false;

function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Keep a bench child under watch: killed by the 'exit' handler if it is
 * still alive when the bench ends, its stderr kept to its last `tailBytes`.
 * Returns `exited` (its code and signal) and `stderr()`, what it wrote so far.
 */
export function watchChild(child, tailBytes) {
  installExitHook();
  live.add(child);
  let err = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => {
    err = (err + d).slice(-tailBytes);
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  exited.then(() => live.delete(child));
  return { exited, stderr: () => err };
}

/**
 * Start `node args…` and wait (up to `timeoutMs`) for the line `listening
 * on URL` on its stdout. Returns `{ pid, url, stop, stderr, exitStatus }`;
 * `stderr()` is what the process has written there so far (kept to its last
 * 64 KiB), `exitStatus()` its code and signal once it has exited (null while
 * it runs), so a bench can tell a server that died from one it stopped.
 */
export function startServerProcess(args, { env = process.env, timeoutMs = 30_000 } = {}) {
  // BENCH_SERVER_CPU_PROF=DIR: each server writes a V8 CPU profile there when it stops (where its time went).
  const profile = process.env.BENCH_SERVER_CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_SERVER_CPU_PROF] : [];
  const child = spawn(process.execPath, [...profile, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  const { exited, stderr } = watchChild(child, 65_536);
  let status = null;
  exited.then((s) => {
    status = s;
  });
  const exitStatus = () => status;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };
  return new Promise((resolve, reject) => {
    let out = "";
    let settled = false;
    const fail = (why) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop().finally(() => reject(new Error(`${args.join(" ")}: ${why}\n${stderr().slice(-2000)}`)));
    };
    const timer = setTimeout(() => fail(`printed no "listening on URL" in ${timeoutMs} ms`), timeoutMs);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        child.stdout.removeAllListeners("data");
        child.stdout.resume();
        resolve({ pid: child.pid, url: m[1].replace(/[).,;]+$/, ""), stop, stderr, exitStatus });
      }
    });
    child.once("error", (e) => fail(`could not start (${e.message})`));
    exited.then(({ code, signal }) => fail(`exited (${code ?? signal}) before listening`));
  });
}

/** A process's resident memory now and at its peak, in KiB, from /proc/PID/status (Linux). */
export function procMemory(pid) {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(text);
    if (!m) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(m[1]);
  };
  return { rssKiB: kib("VmRSS"), hwmKiB: kib("VmHWM") };
}
