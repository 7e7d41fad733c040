import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { GateHome } from "../home/gate-home.js";
import { bundleForChild } from "./child-module.js";
import { makeRunTempDir } from "./run-fixture.js";

let bundled: Promise<string> | undefined;

/**
 * A real process of the library that reserved `bytes` of the home's quota on
 * frozen bytes for `runId` and claimed one file of that size it is about to
 * store (a freeze between `reserveFrozenBytes` and storing its bytes),
 * stopped by SIGSTOP there: what an agent that stops its own freeze leaves.
 * The caller kills it (SIGCONT, then SIGKILL).
 */
export async function stoppedClaimant(home: GateHome, runId: string, bytes: number): Promise<ChildProcess> {
  bundled ??= bundleForChild(fileURLToPath(new URL("../home/frozen-quota.ts", import.meta.url)), makeRunTempDir("twinlock-quota-child-"));
  const script = [
    `const { reserveFrozenBytes } = await import(${JSON.stringify(await bundled)});`,
    `const home = { dir: ${JSON.stringify(home.dir)}, id: ${JSON.stringify(home.id)} };`,
    `const r = await reserveFrozenBytes(home, ${JSON.stringify(runId)}, ${bytes});`,
    `r.claim([{ sha256: ${JSON.stringify("ab".repeat(32))}, stored: ${bytes} }]);`,
    `console.log("claimed"); setInterval(() => {}, 1 << 30);`,
  ].join("\n");
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (b: Buffer) => {
      if (b.toString().includes("claimed")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the claimant exited (${code}) before it claimed its bytes`)));
  });
  child.kill("SIGSTOP");
  return child;
}
