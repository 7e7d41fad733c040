import { type ChildProcess, spawn } from "node:child_process";
import { identityTagOf } from "../store/process-start.js";

const strangers: ChildProcess[] = [];

/**
 * A live `sleep` standing in for the process the kernel gave a dead writer's
 * PID to, and its identity tag now. End them with `killStrangers` after each test.
 */
export function liveStranger(): { pid: number; tag: string } {
  const child = spawn("sleep", ["3000"], { stdio: "ignore" });
  strangers.push(child);
  const pid = child.pid as number;
  let tag = identityTagOf(pid);
  // spawn returns once the child exists; its stat is there at once, but read again until the exec made it `sleep`.
  while (tag === undefined) tag = identityTagOf(pid);
  return { pid, tag };
}

/** End every stand-in made so far (a stopped one too). */
export function killStrangers(): void {
  for (const c of strangers.splice(0)) {
    c.kill("SIGCONT");
    c.kill("SIGKILL");
  }
}

/** The same boot, another start time: what a dead writer's entry records once its PID was handed to another process. */
export function otherStart(tag: string): string {
  const [start, boot] = tag.split("-") as [string, string];
  return `${BigInt(start) + 1n}-${boot}`;
}
