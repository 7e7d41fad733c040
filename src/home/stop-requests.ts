import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync, readSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { RefusalError, UsageError } from "../errors/errors.js";
import { MAX_NAME, MAX_TEXT, promptId, type RunState, runId as runIdSchema, stopReason } from "../run/run-schema.js";
import { atomicCreateNamedAtRename, fsyncDir, mkdirDurable, removeDeadTempFiles } from "../store/atomic-write.js";
import { monotonicStamp } from "../store/queue-lock.js";
import type { EventDraft } from "../store/run-file.js";
import type { GateHome } from "./gate-home.js";
import { STOP_REQUEST_NAME, stopRequestsDirOf } from "./pending-stop-listing.js";

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
  format: typeof FORMAT | typeof FORMAT_V1;
  /**
   * The request's file name without `.json`: `STAMP-NONCE`, STAMP the machine's monotonic clock (20 digits, ns) read
   * when the request's bytes were durable, just before it became visible in the folder, so requests sort in the order
   * they became visible, which is the order they are written into the chain. (A request of format 1 is named by the
   * time it was asked for, 13 digits of ms, and sorts before every one of format 2.) Not in the file of format 2: the
   * name is chosen after its bytes are written.
   */
  id: string;
  run_id: string;
  reason: string;
  workflow: string | null;
  note: string | null;
  actor: string;
  at: string;
  /**
   * Set on a request file that could not be read as one (why): it stands as a stop of the whole run, raised by the
   * gate home, since the stop it held cannot be known. Never written to a file.
   */
  damaged?: string;
}

const FORMAT = "twinlock-stop-request/2";
/** The format before the ID was taken when the request became visible: the file held its ID, its ask time. */
const FORMAT_V1 = "twinlock-stop-request/1";
/**
 * The largest request file the gate writes: a note and an actor at the chain's limits, each character escaped by
 * JSON in six bytes at most, and the fixed fields. One limit for writing and reading: whatever the gate records, it reads.
 */
const MAX_REQUEST_BYTES = 6 * (MAX_TEXT + MAX_NAME) + 4096;
/**
 * The most requests a run may have pending: a stop is not recorded past it (the run stands stopped already), and
 * a read shows the oldest this many (a writer folds them all into the chain, this many at a time).
 */
export const MAX_PENDING_STOPS = 1000;
/** The reason of the stop a damaged request stands as. */
export const DAMAGED_STOP_REASON = "unreadable-stop-request";
/** Who raised the stop a damaged request stands as. */
const DAMAGED_STOP_ACTOR = "twinlock (gate home)";

function requestsDir(home: GateHome, runId: string): string {
  if (!runIdSchema.safeParse(runId).success) throw new UsageError(`run ID ${JSON.stringify(runId)} is not a twinlock run ID`);
  return stopRequestsDirOf(home.dir, runId);
}

/**
 * Record a person's stop in the gate home, durably (file, fsync, rename, fsync of the folder), without any lock.
 * Refused, recording nothing, when the request is not one the gate would read back (a note over the chain's limit)
 * or when MAX_PENDING_STOPS requests of the run are pending already (`code: STOPS_PENDING_FULL`).
 */
export function recordStopRequest(
  home: GateHome,
  input: {
    runId: string;
    reason: string;
    workflow: string | null;
    note: string | null;
    actor: string;
    at: Date;
    /** The request's random part, 16 hex digits (default: 8 random bytes); a test that replays a run byte for byte fixes it. */
    nonce?: () => string;
    /** The name's stamp, 20 digits (default: the monotonic clock as the file becomes visible); a byte-for-byte replay fixes it. */
    stamp?: () => string;
  },
): StopRequest {
  const dir = requestsDir(home, input.runId);
  const nonce = input.nonce?.() ?? randomBytes(8).toString("hex");
  if (!/^[0-9a-f]{16}$/.test(nonce)) throw new UsageError(`a stop request's nonce is 16 hex digits, not ${JSON.stringify(nonce)}`);
  // The ID's stamp is taken once the bytes are durable, as the file becomes visible (below); the nonce, in the file,
  // ties the file to its name.
  const id = `${"0".repeat(20)}-${nonce}`;
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
  const { id: _unnamed, ...fields } = request;
  const problem = requestProblem({ ...fields, nonce }, input.runId, id);
  if (problem !== undefined) throw new UsageError(`the stop is not recorded: ${problem}`);
  const text = `${JSON.stringify({ ...fields, nonce })}\n`;
  if (Buffer.byteLength(text) > MAX_REQUEST_BYTES)
    throw new UsageError(`the stop is not recorded: it is over the ${MAX_REQUEST_BYTES} bytes a stop request may take; shorten its note`);
  const pending = pendingNames(dir).length;
  if (pending >= MAX_PENDING_STOPS)
    throw new RefusalError(
      `the stop is not recorded: ${pending} stops of run ${input.runId} are pending in the gate home already (at most ${MAX_PENDING_STOPS}), so the run stands stopped; each is written into the run's chain once its lock is free`,
      { code: "STOPS_PENDING_FULL", pending, limit: MAX_PENDING_STOPS },
    );
  mkdirDurable(dir);
  removeDeadTempFiles(path.join(dir, ".new"));
  // Named as it becomes visible: a fold lists the folder and writes what it finds in name order, so a request that
  // became visible after another is never written into the chain before it, whenever each was asked for.
  let named = "";
  const nameAt = () => {
    const stamp = input.stamp?.() ?? monotonicStamp();
    if (!/^[0-9]{20}$/.test(stamp)) throw new UsageError(`a stop request's stamp is 20 digits, not ${JSON.stringify(stamp)}`);
    named = `${stamp}-${nonce}.json`;
    return named;
  };
  let name: string;
  try {
    name = atomicCreateNamedAtRename(dir, text, 0o600, nameAt);
  } catch (error) {
    // The very request recorded before (a replay re-running a command whose writer was killed): the same bytes stand.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !sameBytes(path.join(dir, named), text)) throw error;
    name = named;
  }
  return { ...request, id: name.slice(0, -5) };
}

/** Whether the file holds exactly `text` (one no larger than a request may be). */
function sameBytes(file: string, text: string): boolean {
  try {
    const st = statSync(file);
    return st.size <= MAX_REQUEST_BYTES && readFileSync(file, "utf8") === text;
  } catch {
    return false;
  }
}

/** The names of the request files in `dir`, oldest first; none when there is no folder. */
function pendingNames(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new UsageError(`cannot list ${dir} (${(error as NodeJS.ErrnoException).code}); fix the gate home's permissions`, {
      code: "HOME_UNREADABLE",
    });
  }
  // Format 1's names (13 digits, the ask time) first: they were made before any of format 2 (20 digits, visibility).
  return names.filter((n) => STOP_REQUEST_NAME.test(n)).sort((a, b) => a.indexOf("-") - b.indexOf("-") || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The run's oldest MAX_PENDING_STOPS pending stop requests, oldest first (more are folded into the chain by the
 * writer that writes these). A request file that cannot be read as one is not dropped and stops nothing from being
 * read: it comes back as a stop of the whole run (`damaged`), so admission stays refused until a person lifts it.
 */
export function pendingStopRequests(home: GateHome, runId: string): StopRequest[] {
  const dir = requestsDir(home, runId);
  return pendingNames(dir)
    .slice(0, MAX_PENDING_STOPS)
    .flatMap((name) => readRequest(path.join(dir, name), runId, name.slice(0, -5)) ?? []);
}

/** One request; undefined when it is gone (written into the chain and removed by the run's writer since the listing). */
function readRequest(file: string, runId: string, id: string): StopRequest | undefined {
  let text: string;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return damagedRequest(file, runId, id, `cannot be read (${(error as NodeJS.ErrnoException).code})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_REQUEST_BYTES)
      return damagedRequest(file, runId, id, `is not a file of at most ${MAX_REQUEST_BYTES} bytes`);
    const buffer = Buffer.alloc(stat.size);
    const n = readSync(fd, buffer, 0, stat.size, 0);
    text = buffer.subarray(0, n).toString("utf8");
  } catch (error) {
    return damagedRequest(file, runId, id, `cannot be read (${(error as NodeJS.ErrnoException).code})`);
  } finally {
    closeSync(fd);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return damagedRequest(file, runId, id, "is not JSON");
  }
  const problem = requestProblem(doc, runId, id);
  if (problem !== undefined) return damagedRequest(file, runId, id, `is not a stop request of this run (${problem})`);
  const { nonce: _nonce, ...request } = doc as StopRequest & { nonce?: string };
  return { ...request, id };
}

/**
 * What keeps `doc` from being a stop request of run `runId` named `id`, or undefined: the one check of a request,
 * made before it is written and when it is read, with the chain's own limits (a note of MAX_TEXT characters, a name
 * of MAX_NAME), so a stop the gate records is one it reads back and can write into the chain.
 */
function requestProblem(doc: unknown, runId: string, id: string): string | undefined {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return "not an object";
  const r = doc as Record<string, unknown>;
  const named = r.format === FORMAT ? id.endsWith(`-${String(r.nonce)}`) && !("id" in r) : r.format === FORMAT_V1 && r.id === id;
  if (!named || r.run_id !== runId) return "another format, ID or run";
  if (!stopReason.safeParse(r.reason).success) return "its reason is not a stop reason (a-z, 0-9 and -, at most 120)";
  if (!(r.workflow === null || promptId.safeParse(r.workflow).success)) return "its workflow is not a prompt ID";
  if (!(r.note === null || typeof r.note === "string")) return "its note is not text";
  if (typeof r.note === "string" && r.note.length > MAX_TEXT)
    return `its note is ${r.note.length} characters, over the ${MAX_TEXT} a stop's note may hold (as the run's chain takes); shorten it or link to a document`;
  if (typeof r.actor !== "string" || r.actor.length === 0 || r.actor.length > MAX_NAME)
    return `its actor is not a name of 1 to ${MAX_NAME} characters`;
  if (typeof r.at !== "string" || Number.isNaN(Date.parse(r.at)) || r.at.length > 40) return "its time is not a time";
  return undefined;
}

/**
 * The stop a damaged request file stands as: on the whole run, dated by its name (format 1's, the ask time) or by the
 * file's last change (format 2's name is a monotonic stamp, not a date), saying what was wrong and what to do.
 */
function damagedRequest(file: string, runId: string, id: string, why: string): StopRequest {
  const at =
    id.indexOf("-") === 13 ? new Date(Number(id.slice(0, 13))) : (lstatSync(file, { throwIfNoEntry: false })?.mtime ?? new Date(0));
  return {
    format: FORMAT,
    id,
    run_id: runId,
    reason: DAMAGED_STOP_REASON,
    workflow: null,
    note: `pending stop ${file} ${why}; it stands as a stop of the whole run, since the stop it held cannot be known: lift it (twinlock resolve-stop) once you know what it was`.slice(
      0,
      MAX_TEXT,
    ),
    actor: DAMAGED_STOP_ACTOR,
    at: Number.isNaN(at.getTime()) ? new Date(0).toISOString() : at.toISOString(),
    damaged: why,
  };
}

/** The `stop_raised` event a request becomes in the chain of the run in `state`. */
export function stopRequestEvent(state: RunState, request: StopRequest): EventDraft {
  const r = onRun(state, request);
  return { type: "stop_raised", actor: r.actor, data: { reason: r.reason, workflow: r.workflow, note: r.note, request: r.id } };
}

/**
 * A request as it stands on the run in `state`: one naming a workflow the run does not have (a stop of a run file
 * that was another run's when the stop was asked for) stands on the whole run, saying so, rather than be refused by
 * the chain and keep every writer from writing it.
 */
function onRun(state: RunState, r: StopRequest): StopRequest {
  if (r.workflow === null || Object.hasOwn(state.workflows, r.workflow)) return r;
  const why = `named workflow ${r.workflow}, which is not in run ${state.run_id}: it stands on the whole run`;
  return { ...r, workflow: null, note: (r.note === null ? why : `${why}. ${r.note}`).slice(0, MAX_TEXT) };
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
      ...pending
        .map((request) => onRun(state, request))
        .map((r, i) => ({
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
