import type { ChildProcess } from "node:child_process";

/** SIGKILL every child still running and wait for each to exit, emptying the list: a test's processes never outlive it. */
export async function killChildren(children: ChildProcess[]): Promise<void> {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once("exit", r));
      c.kill("SIGKILL");
      await exited;
    }
  }
}
