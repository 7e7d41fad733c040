import { RefusalError } from "../errors/errors.js";
import type { GateHome } from "../home/gate-home.js";
import { runsRecordedAt } from "../home/run-checkpoints.js";
import { pendingStopRequests, recordStopRequest, type StopRequest, withPendingStops } from "../home/stop-requests.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { endSessionsOfRun, sessionRunFile } from "../home/write-session-binding.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import { MAX_STOPS_PER_LIFT, type RunState, type StopResolution } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import { resolveRunFile } from "../store/run-folder.js";
import type { RunStore } from "../store/run-store.js";
import { sealReceipt } from "../trust/seal-receipt.js";
import { personForKey } from "../trust/sign-as-reviewer.js";
import type { ReceiptKey } from "../trust/sign-receipt.js";

/** How long a stop waits for the run's lock to write itself into the chain; it stands in the gate home meanwhile. */
export const STOP_FOLD_WAIT_MS = 5_000;

/** A raised stop: the run as it stands with it, the stop's number once in the chain, and why it is not there yet. */
export type RaisedStop = LoadedRun & {
  /** The sequence number of its `stop_raised` event; undefined while pending (or written by another writer). */
  stop?: number;
  /** Set when the stop stands in the gate home but is not yet in the run's chain: why (the run's lock is held). */
  pending?: string;
  /**
   * Set when this stop is recorded nowhere, why: MAX_PENDING_STOPS stops of the run are pending in the gate home
   * already (the run stands stopped by them), and the run's lock stayed held.
   */
  notRecorded?: string;
  /**
   * The folder store: the runs the stop was recorded for, by ID. Those the gate home's checkpoints record at the run
   * file come first; the run the file held when it was read is last (another one when the agent swapped the file).
   */
  runs?: string[];
};

/**
 * Record a hard `!STOP:{reason}` on the run, or on one workflow; anyone may
 * raise one, and admission refuses while it is open. On the folder store
 * the stop is first recorded in the gate home (`recordStopRequest`), which
 * takes no lock: from then on every read of the run shows it, so admission,
 * the hook and the pages refuse, whoever holds the run's lock. It is then
 * written into the run's chain, waiting for the lock at most `lockWaitMs`;
 * when the lock stays held (a writer the agent stopped), the next writer of
 * the run writes it first, and the result says it is pending.
 */
export async function raiseStop(input: {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  reason: string;
  workflow?: string;
  note?: string;
  actor: string;
  now?: () => Date;
  /** The stop request's random part (recordStopRequest's `nonce`): fixed only by a test that replays a run byte for byte. */
  nonce?: () => string;
  /** The stop request's stamp (recordStopRequest's `stamp`): fixed only by a test that replays a run byte for byte. */
  stamp?: () => string;
  /** How long to wait for the run's lock before leaving the stop pending (default STOP_FOLD_WAIT_MS). */
  lockWaitMs?: number;
}): Promise<RaisedStop> {
  const draft = { reason: input.reason, workflow: input.workflow ?? null, note: input.note ?? null };
  if (input.store.runFolder(input.run) !== undefined) return raiseStopInHome(input, draft);
  // A team store: the stop is one write of its chain; exec's re-checks end the sessions bound to it (`sessionEnded`).
  const { run } = await input.store.update(
    input.run,
    (current) => {
      if (input.workflow !== undefined) requireWorkflow(current.state.workflows, input.workflow);
      return { events: [{ type: "stop_raised", actor: input.actor, data: draft }], result: undefined };
    },
    { now: input.now },
  );
  return { ...run, stop: run.file.revision };
}

/** The folder store's stop: recorded in the gate home at once, then written into the chain when the run's lock allows. */
async function raiseStopInHome(input: StopInHomeInput, draft: StopDraft): Promise<RaisedStop> {
  const { home } = input.store;
  const runFile = boundRunFile(input.run);
  const why = `!STOP:${draft.reason} was raised on ${draft.workflow ?? "the run"} by ${input.actor}`;
  const endSessions = () => (runFile === undefined ? undefined : endSessionsOfRun(home, runFile, draft.workflow ?? undefined, why));
  const requests = stopRequestRecorder(home, input, draft);
  // The runs the home knows live at this path come first, whatever the file holds now: the agent may have swapped
  // another run's file in, or left it unreadable, for the moment the person stops it. A stop of the whole run is
  // recorded for them before the file is read; one of a workflow once the file shows the workflow is there (a typo
  // is refused, recording nothing), or, when the file is not theirs, on the whole run (as the fold writes it).
  const recorded = runsRecordedAt(home, resolveRunFile(input.run));
  if (draft.workflow === null) for (const id of recorded) requests.record(id);
  // Read without the lock: verified and set against the home's checkpoint, as every read is.
  let before: LoadedRun | undefined;
  let unreadable: unknown;
  try {
    before = await input.store.read(input.run);
  } catch (error) {
    unreadable = error;
  }
  if (before && draft.workflow !== null && (recorded.length === 0 || recorded.includes(before.state.run_id)))
    requireWorkflow(before.state.workflows, draft.workflow);
  for (const id of recorded) requests.record(id);
  const others = recorded.filter((id) => id !== before?.state.run_id);
  if (before === undefined || (draft.workflow !== null && !Object.hasOwn(before.state.workflows, draft.workflow))) {
    await endSessions();
    if (before === undefined) {
      if (others.length > 0 && unreadable instanceof Error)
        unreadable.message = `${unreadable.message}; the stop stands all the same: recorded in the gate home for ${others.join(", ")}, whose checkpoint names this run file`;
      throw unreadable;
    }
    // The file holds another run than the one recorded here, without that workflow: only the recorded runs are stopped.
    return { ...before, state: before.file.state, pending: "the run file holds another run now", runs: others };
  }
  // Past the cap of pending requests the run stands stopped already: this stop is written into the chain itself, if
  // the run's lock comes free in time, else it is not recorded, and the person is told so.
  const own = requests.record(before.state.run_id);
  // Then the run file's sessions end: from the request on, the hook denies them anyway, and a bind under way re-reads
  // the run once its binding is written, so it sees the stop, or its binding was there for this to end.
  await endSessions();
  return writeStopIntoChain(input, draft, { before, others, own });
}

type StopDraft = { reason: string; workflow: string | null; note: string | null };
type StopInHomeInput = {
  store: RunStore;
  run: string;
  actor: string;
  now?: () => Date;
  nonce?: () => string;
  stamp?: () => string;
  lockWaitMs?: number;
};

/**
 * Records a stop request for each run at most once, keeping each run's
 * request or the refusal that the run has as many pending as it may (it
 * stands stopped already).
 */
function stopRequestRecorder(home: GateHome, input: StopInHomeInput, draft: StopDraft) {
  const at = input.now?.() ?? new Date();
  const requests = new Map<string, StopRequest | RefusalError>();
  return {
    record(runId: string): StopRequest | RefusalError {
      const known = requests.get(runId);
      if (known !== undefined) return known;
      let made: StopRequest | RefusalError;
      try {
        made = recordStopRequest(home, { runId, ...draft, actor: input.actor, at, nonce: input.nonce, stamp: input.stamp });
      } catch (error) {
        if (!(error instanceof RefusalError && error.code === "STOPS_PENDING_FULL")) throw error;
        made = error;
      }
      requests.set(runId, made);
      return made;
    },
  };
}

/**
 * The stop written into the run's chain under its lock: the run's own
 * request folded (or, past the cap, the stop itself), or, when the agent
 * swapped another run's file in, that run stopped too. Whatever keeps it out
 * of the chain, the stop stands in the home, and the result says it is pending
 * (or, past the cap, not recorded), never that it was lost.
 */
async function writeStopIntoChain(
  input: StopInHomeInput,
  draft: StopDraft,
  at: { before: LoadedRun; others: string[]; own: StopRequest | RefusalError },
): Promise<RaisedStop> {
  const { home } = input.store;
  const loaded = at.before;
  const runId = loaded.state.run_id;
  const request = at.own instanceof RefusalError ? undefined : at.own;
  const full = at.own instanceof RefusalError ? at.own.message : undefined;
  const runs = [...at.others, runId];
  const standing = (why: string): RaisedStop => ({
    ...loaded,
    runs,
    // The chain's own state: the read's already shows the requests pending when it was made.
    state: withPendingStops(loaded.file.state, loaded.file.revision, pendingStopRequests(home, runId)),
    pending: why,
  });
  try {
    const { run, result } = await input.store.update(
      input.run,
      (current, context) => {
        if (current.state.run_id === runId) {
          if (request !== undefined) return { events: [], result: context?.foldedStops.get(request.id) };
          return { events: [{ type: "stop_raised", actor: input.actor, data: draft }], result: current.file.revision + 1 };
        }
        // The file names another run now (the agent swapped it): that run is stopped too, in its chain. Failing closed,
        // a stop of a path stops every run the path held while the stop was asked for.
        if (draft.workflow !== null) requireWorkflow(current.state.workflows, draft.workflow);
        return { events: [{ type: "stop_raised", actor: input.actor, data: draft }], result: undefined };
      },
      { now: input.now, lockWaitMs: input.lockWaitMs ?? STOP_FOLD_WAIT_MS },
    );
    if (result !== undefined) return { ...run, stop: result, runs };
    if (run.state.run_id !== runId) return { ...run, stop: run.file.revision, runs: [...runs, run.state.run_id] };
    // Not written by this call: by another writer of the run (then it is in the chain), or still pending.
    if (request !== undefined && pendingStopRequests(home, runId).some((r) => r.id === request.id))
      return standing("the run's lock was busy");
    return { ...run, runs };
  } catch (error) {
    if (full !== undefined) return { ...standing((error as Error).message), pending: undefined, notRecorded: full };
    return standing((error as Error).message);
  }
}

/**
 * The run file's real path, as a session binding names it; undefined when it
 * cannot be worked out (no such folder, a name too long): then no session can
 * be bound to it, and the stop's own write reports the problem.
 */
function boundRunFile(run: string): string | undefined {
  try {
    return sessionRunFile(run);
  } catch {
    return undefined;
  }
}

/** A standing stop as a refusal names it, so the person can pick it by its number. */
export interface OpenStopRef {
  seq: number;
  reason: string;
  workflow: string | null;
  raised_by: string;
  raised_at: string;
}

/**
 * Lift exactly the stops named by their numbers (the `stop_raised` events'
 * sequence numbers), each standing and of `reason` (and on `workflow`, when
 * given), with a note saying how. Without `stops`: the one standing stop of
 * that reason; with several standing, it refuses (`STOPS_AMBIGUOUS`, listing
 * them) rather than lift several the person did not pick. The signed receipt
 * names the stops, so a stop raised later is never lifted by it. On signing
 * suites only a key with the `stop` right may lift a stop, and admission
 * re-judges the signed resolution under the pin.
 */
export async function resolveStop(input: {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  reason: string;
  workflow?: string;
  /** The stops to lift, by the sequence numbers of their `stop_raised` events. */
  stops?: readonly number[];
  note: string;
  actor?: string;
  /** The person's key file, or a passkey signer (the gate server). */
  key?: ReceiptKey;
  now?: () => Date;
}): Promise<{ run: LoadedRun; resolved: number; receipt: StopResolution }> {
  const before = await input.store.read(input.run);
  // Lifting a stop is judged by the pinned policy alone; no prompt is read.
  const pinned = loadPinnedPolicy(input.store.home, before.state.suite);
  const person = personForKey(input.key, input.actor, pinned.config, "--actor");
  const { run, result } = await input.store.update(
    input.run,
    (current) => {
      const stops = pickStops(current.state, input.reason, input.workflow, input.stops);
      const unsigned: StopResolution = {
        kind: "stop_resolution",
        run_id: current.state.run_id,
        reason: input.reason,
        workflow: input.workflow ?? null,
        stops,
        by: person,
        resolution: input.note,
        at: (input.now?.() ?? new Date()).toISOString(),
      };
      const receipt = sealReceipt(unsigned, { key: input.key, person, right: "stop", config: pinned.config, what: "lift a stop on" });
      return { events: [{ type: "stop_resolved", actor: person, data: { receipt } }], result: { count: stops.length, receipt } };
    },
    { now: input.now },
  );
  return { run, resolved: result.count, receipt: result.receipt };
}

/** The standing stops of a run, as a refusal lists them. */
function openStopRefs(state: RunState, reason?: string, workflow?: string): OpenStopRef[] {
  return state.stops
    .filter(
      (s) => s.resolved_at === null && (reason === undefined || s.reason === reason) && (workflow === undefined || s.workflow === workflow),
    )
    .map((s) => ({ seq: s.seq, reason: s.reason, workflow: s.workflow, raised_by: s.raised_by, raised_at: s.raised_at }));
}

/** How a refusal names a stop: `5 (!STOP:db-freeze on MD-29, raised by ana)`. */
function describeStop(s: OpenStopRef): string {
  return `${s.seq} (!STOP:${s.reason} on ${s.workflow ?? "the whole run"}, raised by ${s.raised_by})`;
}

/** The stops a lift names, ascending; refuses any that is not a standing stop of the reason, or a choice left to guess. */
function pickStops(state: RunState, reason: string, workflow: string | undefined, named: readonly number[] | undefined): number[] {
  const where = `${reason}${workflow === undefined ? "" : ` on ${workflow}`}`;
  const candidates = openStopRefs(state, reason, workflow);
  if (named === undefined) {
    if (candidates.length === 1) return [(candidates[0] as OpenStopRef).seq];
    if (candidates.length === 0) {
      const open = openStopRefs(state);
      throw new RefusalError(
        `no standing !STOP:${where}; standing stops: ${open.length === 0 ? "none" : open.map(describeStop).join(", ")}`,
        { code: "NO_SUCH_STOP", reason, workflow: workflow ?? null, open },
      );
    }
    throw new RefusalError(
      `${candidates.length} stops !STOP:${where} stand: ${candidates.map(describeStop).join(", ")}; name the ones to lift by their numbers (one lift never lifts several unless each is named)`,
      { code: "STOPS_AMBIGUOUS", reason, workflow: workflow ?? null, open: candidates },
    );
  }
  if (named.length === 0) throw new RefusalError("a lift must name at least one stop", { code: "NO_SUCH_STOP", reason, open: candidates });
  if (named.length > MAX_STOPS_PER_LIFT)
    throw new RefusalError(`a lift names at most ${MAX_STOPS_PER_LIFT} stops; this one names ${named.length}`, {
      code: "TOO_MANY_STOPS",
      limit: MAX_STOPS_PER_LIFT,
      found: named.length,
    });
  const picked = [...new Set(named)].sort((a, b) => a - b);
  const bySeq = new Map(candidates.map((c) => [c.seq, c]));
  const notStanding = picked.filter((seq) => !bySeq.has(seq));
  if (notStanding.length > 0)
    throw new RefusalError(
      `${notStanding.length === 1 ? `stop ${notStanding[0]} is` : `stops ${notStanding.join(", ")} are`} not a standing !STOP:${where}; standing !STOP:${where}: ${candidates.length === 0 ? "none" : candidates.map(describeStop).join(", ")}`,
      { code: "NO_SUCH_STOP", reason, workflow: workflow ?? null, stops: notStanding, open: candidates },
    );
  return picked;
}
