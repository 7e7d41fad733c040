import { RefusalError } from "../../errors/errors.js";
import { collectFrozenGarbage, formatBytes } from "../../home/frozen-quota.js";
import { readCheckpoint } from "../../home/run-checkpoints.js";
import { readRun } from "../../home/run-ledger.js";
import { frozenFilesOf } from "../../store/run-store.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { homeOption } from "../home-option.js";

/** `twinlock home gc`: delete the frozen files no run of the gate home uses, and say what remains. */
export async function runHomeGc(o: CommonOptions): Promise<CommandResult> {
  const home = homeOption(o);
  const report = await collectFrozenGarbage(home, (runId) => {
    const cp = readCheckpoint(home, runId);
    if (!cp?.run_file) throw new RefusalError(`no run file is recorded for it`);
    return frozenFilesOf(readRun(cp.run_file, home).file.events);
  });
  const q = report.quota;
  const lines = [
    `collected ${report.collected.blobs} frozen file(s) no run uses (${formatBytes(report.collected.bytes)})`,
    `kept ${report.remaining.blobs} frozen file(s), ${formatBytes(report.remaining.bytes)} on disk, of the limit of ${formatBytes(q.perHome)} per gate home; ${formatBytes(q.perRun)} per run`,
    ...report.runs.slice(0, 10).map((r) => `  ${r.run_id}: ${formatBytes(r.bytes)}`),
  ];
  return {
    exitCode: 0,
    text: lines.join("\n"),
    json: {
      ok: true,
      collected: report.collected,
      remaining: report.remaining,
      limits: { frozen_bytes_per_run: q.perRun, frozen_bytes_per_home: q.perHome },
      runs: report.runs,
    },
  };
}
