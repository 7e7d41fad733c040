import { type ChildProcess, fork } from "node:child_process";

/**
 * A writer process started with `fork`: it loads the built library, says
 * "ready", and starts writing when told "go". Keeping start-up (loading
 * modules) apart from writing lets a test start all writers at one instant,
 * or kill one at a chosen moment of its writing.
 */
export interface ChildWriter {
  child: ChildProcess;
  pid: number;
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
  /** What it printed on stdout so far. */
  stdout: () => string;
  /** Tell the writer to start; `message` is what it receives (default "go"). */
  go: (message?: unknown) => void;
}

const live = new Set<ChildProcess>();

/** Fork `script` with `args` (plain Node, none of the test runner's flags). */
export function forkWriter(script: string, args: string[]): ChildWriter {
  const child = fork(script, args, { execArgv: [], stdio: ["ignore", "pipe", "pipe", "ipc"] });
  live.add(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // "close", not "exit": by then the output streams are read to their end.
    child.once("close", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.once("message", (m) => (m === "ready" ? resolve() : reject(new Error(`unexpected message ${String(m)}`))));
    exited.then(({ code, signal }) => reject(new Error(`writer ${child.pid} exited (${code ?? signal}) before it was ready: ${err}`)));
  });
  ready.catch(() => {});
  return {
    child,
    pid: child.pid as number,
    ready,
    exited,
    stderr: () => err,
    stdout: () => out,
    go: (message = "go") => child.send(message as string),
  };
}

/** SIGKILL every writer this module started that is still running (by its pid), and wait for each to exit. */
export async function killLiveWriters(): Promise<void> {
  const waits = [...live].map((child) => {
    const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    return done;
  });
  await Promise.all(waits);
}
