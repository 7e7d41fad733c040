// The crash test's writer. Started with a template run file, it first runs a
// command on a private copy of it, so that when it is killed later it is
// writing, not still warming up; then it says "ready". Told
// { runFile }, it reads how many commands the run file holds and keeps
// applying the next command of the shared sequence until it is killed.
// It loads only the store and the stop commands, to start quickly.
// Usage: node crash-writer.mjs TEMPLATE_RUN_FILE
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { raiseStop, resolveStop } from "../../dist/gate/hard-stops.js";
import { readRunFile } from "../../dist/store/run-store.js";
import { runCrashCommand } from "./crash-sequence.mjs";

const lib = { raiseStop, resolveStop };
const commandsIn = (file) => readRunFile(file).file.events.length - 1;

const [template] = process.argv.slice(2);
const warmDir = mkdtempSync(path.join(os.tmpdir(), "twinlock-crash-warm-"));
try {
  const warmFile = path.join(warmDir, "run.json");
  copyFileSync(template, warmFile);
  await runCrashCommand(lib, warmFile, commandsIn(warmFile));
} finally {
  rmSync(warmDir, { recursive: true, force: true });
}
process.once("message", async ({ runFile }) => {
  try {
    let k = commandsIn(runFile);
    for (;;) await runCrashCommand(lib, runFile, k++);
  } catch (error) {
    process.stderr.write(`${error?.name}: ${error?.message}\n`);
    process.exit(1);
  }
});
process.send("ready");
