/**
 * The pending index's crash test's writer (bundled for a child process, see
 * src/home/outbox-pending-index.test.ts): on the gate home `HOME`, it keeps
 * creating runs and recording stops in them (each enqueued: marked, then
 * written), delivering some of what is due (removed: written, then
 * unmarked, by a flush) and giving up on others for good, until killed.
 * It says "ready" once its first round is done, so a kill lands mid-work.
 * Given `before:K` or `after:K`, it kills itself with SIGKILL just before or
 * just after the K-th rename of a run's outbox file into place after that
 * round: the very moments between an outbox write and its index's change.
 * Usage: node BUNDLE HOME RUNS_DIR [before:K|after:K]
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { folderRunStore } from "../home/folder-run-store.js";
import { openGateHome } from "../home/gate-home.js";
import { GAVE_UP } from "../store/notification-outbox.js";
import type { EventDraft } from "../store/run-file.js";

const [homeDir, runsDir, killAt] = process.argv.slice(2) as [string, string, string | undefined];
let armed = false;
if (killAt !== undefined) {
  const [when, k] = killAt.split(":") as ["before" | "after", string];
  let left = Number(k);
  const rename = fs.renameSync;
  // Every module's `renameSync` (the atomic write's too) is this one once the built-in's exports are synced.
  fs.renameSync = (from, to) => {
    const counted = armed && String(to).includes(`${path.sep}notify${path.sep}outbox${path.sep}`) && --left === 0;
    if (counted && when === "before") process.kill(process.pid, "SIGKILL");
    rename(from, to);
    if (counted) process.kill(process.pid, "SIGKILL");
  };
  syncBuiltinESMExports();
}
const store = folderRunStore(openGateHome(homeDir));
const stop = (reason: string): EventDraft => ({ type: "stop_raised", actor: "crash", data: { reason, workflow: null, note: null } });

for (let round = 0; ; round++) {
  const runId = `run_${randomBytes(8).toString("hex")}`;
  const ref = path.join(runsDir, `${runId}.json`);
  await store.create(
    ref,
    [
      {
        type: "run_created",
        actor: "crash",
        data: {
          run_id: runId,
          home_id: store.home.id,
          suite: { root: "/crash/suite", suite_id: "crash-suite" },
          settings: { mode: "DRAFT_ONLY", environment: "default", actions: "all", budget: null },
          workflows: [{ planner: "MD-29", executor: "MD-30", executor_title: "Executor", pair_digest: `sha256:${"0".repeat(64)}` }],
        },
      },
    ],
    new Date(),
  );
  await store.update(ref, () => ({ events: [stop("a"), stop("b")], result: undefined }));
  for (const [i, entry] of (await store.notifications.due(Date.now(), 100)).entries()) {
    if (i % 3 === 0) await store.notifications.failed(entry, GAVE_UP, "HTTP 410");
    else await store.notifications.delivered(entry);
  }
  await store.notifications.flush();
  if (round === 0) process.stdout.write("ready\n");
  armed = true;
}
