// The crash test's writer. Started with a template run file and a copy of
// its gate home, it first runs a command on private copies of both, so that
// when it is killed later it is writing, not still warming up; then it says
// "ready". Told { runFile, home }, it reads how many commands the run holds
// (as the home knows it) and keeps applying the next command of the shared
// sequence until it is killed. It loads only the store and the stop commands.
// Usage: node crash-writer.mjs TEMPLATE_RUN_FILE TEMPLATE_HOME
import { copyFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { raiseStop, resolveStop } from "../../dist/gate/hard-stops.js";
import { folderRunStore } from "../../dist/home/folder-run-store.js";
import { openGateHome } from "../../dist/home/gate-home.js";
import { readRun } from "../../dist/home/run-ledger.js";
import { runCrashCommand } from "./crash-sequence.mjs";

const lib = { raiseStop, resolveStop, openGateHome, folderRunStore };
const commandsIn = (file, home) => readRun(file, openGateHome(home)).file.events.length - 1;

const [template, templateHome] = process.argv.slice(2);
const warmDir = mkdtempSync(path.join(os.tmpdir(), "twinlock-crash-warm-"));
try {
  const warmFile = path.join(warmDir, "run.json");
  const warmHome = path.join(warmDir, "home");
  copyFileSync(template, warmFile);
  cpSync(templateHome, warmHome, { recursive: true });
  await runCrashCommand(lib, warmFile, commandsIn(warmFile, warmHome), warmHome);
} finally {
  rmSync(warmDir, { recursive: true, force: true });
}
process.once("message", async ({ runFile, home }) => {
  try {
    let k = commandsIn(runFile, home);
    for (;;) await runCrashCommand(lib, runFile, k++, home);
  } catch (error) {
    process.stderr.write(`${error?.name}: ${error?.message}\n`);
    process.exit(1);
  }
});
process.send("ready");
