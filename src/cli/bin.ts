#!/usr/bin/env node
import { isMainThread, workerData } from "node:worker_threads";
import { writeOutput } from "../write-output.js";

/** The commands that run while an agent does, or serve: their arguments are hidden from other processes once read. */
const LONG_LIVED = new Set(["exec", "plan", "serve", "mcp", "create"]);

// The one-file build started again as a worker thread (src/offload/run-off-thread.ts): it serves offloaded tasks, no command.
if (!isMainThread && (workerData as { twinlockOffload?: boolean } | undefined)?.twinlockOffload) {
  import("../offload/offload-worker.js");
} else if (process.argv[2] === "hook") {
  // The hook runs before every agent tool call: it skips commander and the command table, loading only its own modules.
  import("../hook/run-hook.js").then(
    (m) => m.runHook(process.argv.slice(3)),
    () => {
      writeOutput(2, "twinlock: the hook could not start; denied\n");
      process.exit(2);
    },
  );
} else {
  // A long-lived command's arguments may carry a store URL with its password: /proc/PID/cmdline is readable by every
  // user, and an agent below exec or plan could read its parent's. The title overwrites the argument area in place.
  if (LONG_LIVED.has(process.argv[2] ?? "")) process.title = `twinlock ${process.argv[2]}`;
  import("./main.js").then(
    (m) =>
      m.main(process.argv.slice(2)).then(
        (code) => {
          process.exitCode = code;
        },
        (error) => {
          writeOutput(2, `twinlock: internal error: ${error?.stack ?? error}\n`);
          process.exitCode = 1;
        },
      ),
    (error) => {
      writeOutput(2, `twinlock: internal error: ${error?.stack ?? error}\n`);
      process.exitCode = 1;
    },
  );
}
