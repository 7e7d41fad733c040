import { presentFrozenRecords } from "../gate/present-frozen-records.js";
import { copyHandoff, keepSnapshot, listHandoffForFreeze, removeSnapshot } from "../home/frozen-bytes.js";
import { frozenStanding } from "../home/frozen-quota.js";
import type { GateHome } from "../home/gate-home.js";
import { judgeAndPlaceRunBytes } from "../home/run-ledger.js";
import { judgeLiveHandoff } from "../mcp/live-handoff-source.js";
import { appendEvents } from "../store/run-file.js";
import { renderAgentDocuments } from "../web/render-agent-documents.js";

/**
 * The work twinlock never does on a server's thread (see `runOffThread`):
 * each task takes and returns plain data (structured-cloned between
 * threads) and runs on a worker thread, synchronous code and all.
 */
export const OFFLOAD_TASKS = {
  /** A freeze's listing and the bytes its files take (frozen-bytes.ts). */
  listHandoffForFreeze,
  /** What the home and a run store now, and what freezes under way reserved (frozen-quota.ts). */
  frozenStanding: (input: { home: GateHome; runId?: string; mine?: string }) => frozenStanding(input.home, input.runId, input.mine),
  /** A freeze's copy, hash, fsyncs and readiness of the copy (frozen-bytes.ts). */
  copyHandoff,
  /** A decided freeze's bytes stored in the home (frozen-bytes.ts). */
  keepSnapshot,
  /** A freeze's private copy removed (frozen-bytes.ts). */
  removeSnapshot,
  /** Readiness of a live handoff folder, read in place beneath its real root (live-handoff-source.ts). */
  judgeLiveHandoff,
  /** A revision's records read, diffed and cut to their budget for \`present\` and the pages (present-frozen-records.ts). */
  presentFrozenRecords,
  /** New run-file bytes a server read, parsed, checked, replayed and set against the home's checkpoint (run-ledger.ts). */
  judgeRunFileBytes: judgeAndPlaceRunBytes,
  /** A decision's large drafts (a freeze's manifest) numbered, chained, applied and signed onto a run's state (run-file.ts). */
  appendRunEvents: appendEvents,
  /** A revision page's agent-written Markdown (the executor's body, report.md) rendered to inert HTML (render-agent-documents.ts). */
  renderAgentDocuments,
};

export type OffloadTasks = typeof OFFLOAD_TASKS;
