import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, unlinkSync } from "node:fs";
import path from "node:path";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { promptId, type RunState, runId as runIdSchema, stopReason } from "../run/run-schema.js";
import { atomicWriteFile, fsyncDir, mkdirDurable } from "../store/atomic-write.js";
import type { EventDraft } from "../store/run-file.js";
import type { GateHome } from "./gate-home.js";

/**
 * A person's stop recorded in the gate home before it is in the run's chain
 * (`runs/RUN_ID.stops/ID.json`). Raising a stop never waits for the run's
 * lock: a writer the agent started and stopped (SIGSTOP) may hold that lock
 * for as long as it likes. The request is in force from the moment it is
 * written: every read of the run shows it as a standing stop (so admission,
 * the hook and the pages refuse), and the next writer of the run, whoever
 * it is, writes it into the chain as a `stop_raised` event before its own
 * decision (see `updateRun`).
 */
export interface StopRequest {
  format: typeof FORMAT;
  id: string;
  run_id: string;
  reason: string;
  workflow: string | null;
  note: string | null;
  actor: string;
  at: string;
}

const FORMAT = "twinlock-stop-request/1";
const ID = /^(\d{13})-([0-9a-f]{16})\.json$/;
/** A request is a few hundred bytes; the gate writes them, but a home is read as untrusted as any input. */
const MAX_REQUEST_BYTES = 64 * 1024;
/** More pending requests than this is a home gone wrong: refused (fail closed) rather than read without bound. */
const MAX_PENDING = 1000;

function requestsDir(home: GateHome, runId: string): string {
  if (!runIdSchema.safeParse(runId).success) throw new UsageError(`run ID ${JSON.stringify(runId)} is not a twinlock run ID`);
  return path.join(home.dir, "runs", `${runId}.stops`);
}

/** Record a person's stop in the gate home, durably (file, fsync, rename, fsync of the folder), without any lock. */
export function recordStopRequest(
  home: GateHome,
  input: { runId: string; reason: string; workflow: string | null; note: string | null; actor: string; at: Date },
): StopRequest {
  const dir = mkdirDurable(requestsDir(home, input.runId));
  // The time first, so the names sort in the order the requests were made (ties broken by the random part).
  const id = `${String(input.at.getTime()).padStart(13, "0")}-${randomBytes(8).toString("hex")}`;
  const request: StopRequest = {
    format: FORMAT,
    id,
    run_id: input.runId,
    reason: input.reason,
    workflow: input.workflow,
    note: input.note,
    actor: input.actor,
    at: input.at.toISOString(),
  };
  atomicWriteFile(path.join(dir, `${id}.json`), `${JSON.stringify(request)}\n`, 0o600);
  return request;
}

/** The run's pending stop requests, oldest first; a damaged one is an IntegrityError (a stop is never dropped unread). */
export function pendingStopRequests(home: GateHome, runId: string): StopRequest[] {
  const dir = requestsDir(home, runId);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new UsageError(`cannot list ${dir} (${(error as NodeJS.ErrnoException).code}); fix the gate home's permissions`, {
      code: "HOME_UNREADABLE",
    });
  }
  const files = names.filter((n) => ID.test(n)).sort();
  if (files.length > MAX_PENDING)
    throw new IntegrityError(
      `${dir} holds ${files.length} pending stops, over the ${MAX_PENDING} a run may have; the gate home is damaged — every admission of run ${runId} is refused until it is repaired`,
      { code: "HOME_DAMAGED" },
    );
  return files.flatMap((name) => readRequest(path.join(dir, name), runId, name.slice(0, -5)) ?? []);
}

/** One request; undefined when it is gone (written into the chain and removed by the run's writer since the listing). */
function readRequest(file: string, runId: string, id: string): StopRequest | undefined {
  const damaged = (why: string) =>
    new IntegrityError(`pending stop ${file} ${why}; the gate home is damaged — admission of run ${runId} is refused until it is repaired`);
  let text: string;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw damaged(`cannot be read (${(error as NodeJS.ErrnoException).code})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_REQUEST_BYTES) throw damaged(`is not a file of at most ${MAX_REQUEST_BYTES} bytes`);
    const buffer = Buffer.alloc(stat.size);
    const n = readSync(fd, buffer, 0, stat.size, 0);
    text = buffer.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text);
  } catch {
    throw damaged("is not JSON");
  }
  const str = (v: unknown, max: number) => typeof v === "string" && v.length <= max;
  if (
    doc === null ||
    typeof doc !== "object" ||
    doc.format !== FORMAT ||
    doc.id !== id ||
    doc.run_id !== runId ||
    !stopReason.safeParse(doc.reason).success ||
    !(doc.workflow === null || promptId.safeParse(doc.workflow).success) ||
    !(doc.note === null || str(doc.note, 16 * 1024)) ||
    !str(doc.actor, 200) ||
    !str(doc.at, 40)
  )
    throw damaged("is not a stop request of this run");
  return doc as unknown as StopRequest;
}

/** The `stop_raised` event a request becomes in the chain. */
export function stopRequestEvent(request: StopRequest): EventDraft {
  return {
    type: "stop_raised",
    actor: request.actor,
    data: { reason: request.reason, workflow: request.workflow, note: request.note },
  };
}

/** Remove requests the chain now holds (after their events' checkpoint is durable), then fsync the folder. */
export function removeStopRequests(home: GateHome, runId: string, requests: readonly StopRequest[]): void {
  if (requests.length === 0) return;
  const dir = requestsDir(home, runId);
  for (const r of requests) {
    try {
      unlinkSync(path.join(dir, `${r.id}.json`));
    } catch {
      // Already gone.
    }
  }
  fsyncDir(dir);
}

/**
 * The run's state with its pending stops added as standing stops, numbered as
 * they will be when written into the chain (the next writer writes them first,
 * in this order): what every read of the run shows, so nothing is admitted,
 * and no hooked tool call allowed, while one is pending.
 */
export function withPendingStops(state: RunState, revision: number, pending: readonly StopRequest[]): RunState {
  if (pending.length === 0) return state;
  return {
    ...state,
    stops: [
      ...state.stops,
      ...pending.map((r, i) => ({
        seq: revision + i + 1,
        reason: r.reason,
        workflow: r.workflow,
        raised_at: r.at,
        raised_by: r.actor,
        note: r.note,
        resolved_at: null,
        resolved_by: null,
        resolution: null,
        resolution_receipt: null,
      })),
    ],
  };
}
