import { closeSync, fstatSync, readFileSync } from "node:fs";
import { judgeHandoff, type ReadinessSummary, summarizeReadiness } from "../handoff/check-readiness.js";
import type { HandoffFormat } from "../handoff/handoff-format.js";
import { folderSource, type HandoffSource, MAX_RECORD_BYTES, type SourceText } from "../handoff/handoff-source.js";
import { resolveHandoffRoot } from "../handoff/hash-handoff.js";
import { type HandoffFormatRecipe, handoffFormatOf, handoffFormatRecipe } from "../handoff/select-handoff-format.js";
import { gateFolders } from "../home/gate-folders.js";
import type { GateHome } from "../home/gate-home.js";
import { openBeneath } from "../input/open-beneath.js";
import { describeFileKind } from "../input/read-regular-file.js";
import { runOffThread } from "../offload/run-off-thread.js";

/**
 * Readiness of the live handoff folder (MCP's `twinlock_readiness`), judged
 * in place — no copy. The real root is resolved and checked once here by
 * the rules every reader of a live handoff obeys (`resolveHandoffRoot`:
 * `confine`, and never the gate home or a key folder, by name or real
 * path); the listing, the reads and the judgement of records up to 16 MiB
 * run on a worker thread (`runOffThread`), so neither 20,000 files nor a
 * large record holds the server's event loop.
 */
export async function liveHandoffReadiness(
  home: GateHome,
  dir: string,
  confine: (realRoot: string) => void,
  format: HandoffFormat,
): Promise<ReadinessSummary> {
  const root = resolveHandoffRoot(dir, gateFolders(home), confine);
  const recipe = handoffFormatRecipe(format);
  // A format built otherwise than from a suite (a test's) cannot cross to a worker: it is judged here.
  const report = recipe
    ? await runOffThread("judgeLiveHandoff", { root, format: recipe })
    : summarizeReadiness({ ...judgeHandoff(liveHandoffSource(root), format), dir: root });
  return { ...report, dir };
}

/** Readiness of the live folder at the real root `root` in a format's recipe (a worker's task). */
export function judgeLiveHandoff(input: { root: string; format: HandoffFormatRecipe }): ReadinessSummary {
  return summarizeReadiness({ ...judgeHandoff(liveHandoffSource(input.root), handoffFormatOf(input.format)), dir: input.root });
}

/**
 * The live handoff folder at its real root as a source for readiness: listed
 * by `listHandoffFiles` (links and special files refused), each file a
 * format reads opened beneath the real root (a folder swapped for a link
 * meanwhile is refused) without following a link or waiting on a FIFO, and
 * read within the record limit.
 */
export function liveHandoffSource(root: string): HandoffSource {
  return folderSource(root, readText);
}

/** A text file's content, opened beneath the real root; too large or unreadable is a problem, a path swapped for a link a refusal. */
function readText(root: string, rel: string): SourceText {
  let fd: number;
  try {
    fd = openBeneath(root, rel, "handoff");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!code) throw error;
    return { problem: code === "ELOOP" ? "is a symbolic link; copy the file in instead" : `cannot read (${code}); fix its permissions` };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { problem: `is not a regular file but ${describeFileKind(stats)}; remove it` };
    if (stats.size > MAX_RECORD_BYTES)
      return { problem: `over ${MAX_RECORD_BYTES} bytes; keep bulky evidence in separate files and cite them` };
    return { text: readFileSync(fd, "utf8") };
  } catch (error) {
    if (!(error as NodeJS.ErrnoException).code) throw error;
    return { problem: `cannot read (${(error as NodeJS.ErrnoException).code}); fix its permissions` };
  } finally {
    closeSync(fd);
  }
}
