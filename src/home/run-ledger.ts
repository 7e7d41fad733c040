import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { ConflictError, IntegrityError, RefusalError, UsageError } from "../errors/errors.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { requirePlainPath } from "../input/parse-input.js";
import { carry } from "../offload/run-off-thread.js";
import { GENESIS } from "../run/event-chain.js";
import type { RunEvent, RunFile } from "../run/run-schema.js";
import { atomicWriteChunks, atomicWriteFile, fsyncDirAsync, prepareAtomicWrite, removeDeadTempFiles } from "../store/atomic-write.js";
import {
  appendTo,
  appendToAsync,
  type EventDraft,
  type JudgedRunBytes,
  judgeRunFileBytes,
  type LoadedRun,
  readRunFile,
  readRunFileAsync,
  rememberWrittenRun,
  runFileChunks,
  serializeRunFile,
  verifyRunFile,
} from "../store/run-file.js";
import { resolveRunFile } from "../store/run-folder.js";
import { consentHashesOf, type DecideContext, frozenFilesOf, requireFinishedForImport } from "../store/run-store.js";
import { ensureGateKey } from "../trust/gate-key.js";
import { signHead } from "../trust/gate-statement.js";
import { markConsentConsumed } from "./consumed-consents.js";
import { storeFetchedBlob } from "./frozen-bytes.js";
import { recordRunBlobs, withBlobsLock } from "./frozen-quota.js";
import type { GateHome } from "./gate-home.js";
import {
  type Checkpoint,
  prepareCheckpointWrite,
  readCheckpoint,
  reconcileWithCheckpoint,
  withCheckpointLock,
  withRunPathLock,
  writeCheckpoint,
} from "./run-checkpoints.js";
import { pendingStopRequests, removeStopRequests, type StopRequest, stopRequestEvent, withPendingStops } from "./stop-requests.js";
import { requireTrustedGateSignatures } from "./trusted-gate-keys.js";

/**
 * A run file read, verified (chain, replay, state) and set against its
 * checkpoint in the gate home. A file one write behind its checkpoint (a
 * crash between the two writes) is returned rolled forward; any other
 * difference is refused (see `reconcileWithCheckpoint`). Waits (blocking) when
 * a writer may be half way through; `readRunWaiting` waits without blocking.
 */
export function readRun(given: string, home: GateHome): LoadedRun {
  const runFile = resolveRunFile(given);
  for (let attempt = 0; ; attempt++) {
    const got = readRunOnce(runFile, home, attempt);
    if ("run" in got) return got.run;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, got.waitMs);
  }
}

/** `readRun` for a server: the file is read in slices and a wait for a writer half way through lets the event loop run. */
export async function readRunWaiting(given: string, home: GateHome): Promise<LoadedRun> {
  const runFile = resolveRunFile(given);
  for (let attempt = 0; ; attempt++) {
    const placement = { home, recordOf: (runId: string) => checkpointRecord(home, runId) };
    const got = setAgainstCheckpoint(await readRunFileAsync(runFile, placement), runFile, home, attempt);
    if ("run" in got) return got.run;
    await new Promise((resolve) => setTimeout(resolve, got.waitMs));
  }
}

/**
 * New run-file bytes a server read, parsed and verified (on a worker thread: `readRunFileAsync`), then set against the
 * home's checkpoint there: a run that verifies but that the home refuses (events it never recorded, a fork, another
 * home's run, no checkpoint) comes back as the refusal `reconcileWithCheckpoint` gives, not as 16 MiB of events. A file
 * behind its checkpoint comes back as the run: the reader may be between a writer's two writes, and waits and reads again.
 */
export function judgeAndPlaceRunBytes(input: { bytes: Uint8Array; file: string; home?: GateHome }): JudgedRunBytes {
  const judged = judgeRunFileBytes(input);
  if (judged.ok !== true || !input.home) return judged;
  try {
    reconcileWithCheckpoint(input.home, judged.run, input.file);
    return judged;
  } catch (error) {
    const attack = error instanceof IntegrityError ? error.details.attack : undefined;
    if (!(error instanceof IntegrityError || error instanceof UsageError) || attack === "rollback") return judged;
    const runId = judged.run.state.run_id;
    return { ok: "unplaced", error: carry(error), runId, record: checkpointRecord(input.home, runId) };
  }
}

/**
 * The home's record of a run now, as one string (what a refusal of a run set against it depends on): its checkpoint's
 * revision, head and last write, or "none"; undefined when the checkpoint cannot be read.
 */
export function checkpointRecord(home: GateHome, runId: string): string | undefined {
  try {
    const cp = readCheckpoint(home, runId);
    return cp ? `${cp.seq} ${cp.head} ${cp.last_write.from_seq} ${cp.last_write.from_head}` : "none";
  } catch {
    return undefined;
  }
}

/**
 * One try at reading a run without the locks: the run, or how long to wait
 * before the next try. A writer writes the checkpoint, then the file, so
 * between our two reads it can leave the file behind the checkpoint — and
 * only behind, and only while the checkpoint is fresh: a file ahead of or
 * beside its checkpoint, or behind one no writer touched for a while, is
 * refused at once (re-reading it many times was what an agent's rolled-back
 * or hand-extended file cost every reader).
 */
function readRunOnce(runFile: string, home: GateHome, attempt: number): { run: LoadedRun } | { waitMs: number } {
  return setAgainstCheckpoint(readRunFile(runFile), runFile, home, attempt);
}

function setAgainstCheckpoint(
  verified: LoadedRun,
  runFile: string,
  home: GateHome,
  attempt: number,
): { run: LoadedRun } | { waitMs: number } {
  try {
    const { file } = reconcileWithCheckpoint(home, verified.file, runFile);
    // A person's stop recorded in the home and not yet in the chain stands from the moment it was recorded.
    return {
      run: { path: verified.path, file, state: withPendingStops(file.state, file.revision, pendingStopRequests(home, file.state.run_id)) },
    };
  } catch (error) {
    const kind = error instanceof IntegrityError ? error.details.attack : undefined;
    if (attempt >= READ_RETRIES || kind !== "rollback" || !checkpointJustWritten(home, verified.state.run_id)) throw error;
    return { waitMs: 5 + attempt * 5 };
  }
}

/** How often a lock-free reader re-reads a run that is behind a checkpoint being written (about half a second in all). */
const READ_RETRIES = 12;

/** Whether the home's checkpoint of a run changed in the last two seconds (a writer may be between its two writes). */
function checkpointJustWritten(home: GateHome, runId: string): boolean {
  try {
    return Date.now() - statSync(path.join(home.dir, "runs", `${runId}.json`)).mtimeMs < 2000;
  } catch {
    return false;
  }
}

/**
 * Create a run file and its checkpoint: the home first, then the file. A
 * crash in between leaves a checkpoint no file names, which is harmless.
 */
export async function createRun(runFile: string, home: GateHome, drafts: EventDraft[], now: Date): Promise<LoadedRun> {
  const abs = resolveRunFile(runFile);
  const gate = await ensureGateKey(home);
  return withRunPathLock(home, abs, async () => {
    if (exists(abs))
      throw new RefusalError(`run file ${runFile} already exists; choose another name or continue that run`, { code: "RUN_EXISTS" });
    removeDeadTempFiles(abs);
    const run = appendTo(undefined, drafts, now, gate);
    await withCheckpointLock(home, run.state.run_id, () => {
      writeCheckpoint(home, {
        format: "twinlock-checkpoint/1",
        run_id: run.state.run_id,
        home_id: home.id,
        seq: run.revision,
        head: run.head,
        last_write: { from_seq: 0, from_head: GENESIS, events: run.events },
        updated_at: now.toISOString(),
        run_file: abs,
        ...(run.gate_signature ? { gate_signature: run.gate_signature } : {}),
      });
      atomicWriteFile(abs, serializeRunFile(run));
    });
    return { path: abs, file: run, state: run.state };
  });
}

/**
 * The one way to change a run: take the home's lock of the run (a fair
 * queue in the gate home, by run ID); verify the file and set it against its checkpoint; check the
 * caller's expected revision; let `decide` turn the run into new events (or
 * throw a refusal, writing nothing); write the checkpoint with those events,
 * apply their effects in the home (a consumed consent), then replace the
 * run file. Two copies of a run serialize on the home's lock, so exactly one
 * of two racing decisions lands.
 */
export async function updateRun<T>(
  runFile: string,
  home: GateHome,
  decide: (run: LoadedRun, context: DecideContext) => Promise<{ events: EventDraft[]; result: T }> | { events: EventDraft[]; result: T },
  options: { now?: () => Date; expectedRevision?: number; lockWaitMs?: number } = {},
): Promise<{ run: LoadedRun; result: T }> {
  const abs = resolveRunFile(runFile);
  if (!exists(abs))
    throw new UsageError(`run file ${runFile} does not exist; create it with \`twinlock init-run ${runFile} --suite DIR --planner ID\``, {
      code: "NO_RUN_FILE",
    });
  // The run's lock is the home's, by run ID (never a lock beside the run file, which the agent could hold): the ID is
  // peeked from the file's first bytes (unverified: verifying there, outside the lock, would have every waiting writer
  // verify the run at once), then the file is read and verified under the lock, and a file that names another run
  // (swapped meanwhile, or a peeked ID that lied) is followed to that run's lock (a few times at most).
  // New large bytes that verify but that the home would refuse are refused on the worker, never carried back whole.
  const placement = { home, recordOf: (id: string) => checkpointRecord(home, id) };
  let runId = peekRunId(abs) ?? (await readRunFileAsync(abs, placement)).state.run_id;
  // Whether this call wrote the run file (its folder is fsynced once the lock is let go: see writeDecision).
  let wrote = false;
  for (let attempt = 0; ; attempt++) {
    // The ticket is taken as this call is made (before anything here waits), so decisions are served in the order they
    // were asked for; the gate's key is read once this one's turn has come.
    const landed = await withCheckpointLock(
      home,
      runId,
      async (): Promise<{ done: { run: LoadedRun; result: T } } | { moved: string }> => {
        const gate = await ensureGateKey(home);
        // Read in slices and, when the bytes are new and large (the agent's), judged on a worker thread; the bytes this
        // process wrote last are known by their sha256 and not parsed again (`rememberWrittenRun`).
        const verified = await readRunFileAsync(abs, placement);
        if (verified.state.run_id !== runId) return { moved: verified.state.run_id };
        const reconciled = reconcileWithCheckpoint(home, verified.file, runFile);
        if (reconciled.rolledForward.length > 0) {
          applyHomeEffects(home, reconciled.rolledForward, reconciled.file.state.run_id);
          await writeRunFile(abs, reconciled.file);
        }
        let current: LoadedRun = { path: abs, file: reconciled.file, state: reconciled.file.state };
        const clock = options.now ?? (() => new Date());
        const write = async (from: LoadedRun, events: EventDraft[]): Promise<LoadedRun> => {
          const now = clock();
          const next = await appendToAsync(from.file, events, now, gate);
          const added = next.events.slice(from.file.events.length);
          const checkpoint: Checkpoint = {
            format: "twinlock-checkpoint/1",
            run_id: next.state.run_id,
            home_id: home.id,
            seq: next.revision,
            head: next.head,
            last_write: { from_seq: from.file.revision, from_head: from.file.head, events: added },
            updated_at: now.toISOString(),
            run_file: abs,
            ...(next.gate_signature ? { gate_signature: next.gate_signature } : {}),
          };
          await writeDecision(home, abs, checkpoint, next);
          wrote = true;
          return { path: abs, file: next, state: next.state };
        };
        const foldedStops = new Map<string, number>();
        for (let round = 0; ; round++) {
          // A person's stop recorded in the home while this writer waited (or decided) goes into the chain first, and the
          // decision is made (again) on the run with it: a stop never waits behind a decision asked for after it.
          current = await foldStopRequests(home, current, runId, foldedStops, write);
          if (options.expectedRevision !== undefined && options.expectedRevision !== current.file.revision) {
            throw new ConflictError(
              `run file ${runFile} changed since it was read (revision ${options.expectedRevision}, now ${current.file.revision}); read it again and repeat the decision`,
            );
          }
          const { events, result } = await decide(current, { foldedStops });
          if (events.length === 0) return { done: { run: current, result } };
          if (pendingStopRequests(home, runId).length > 0) {
            if (round < 3) continue;
            throw new ConflictError(`stops keep being raised on run file ${runFile} while this decision is made; it was not recorded`);
          }
          return { done: { run: await write(current, events), result } };
        }
      },
      { waitMs: options.lockWaitMs },
    );
    if ("done" in landed) {
      // The run file's rename made durable before the caller hears of it, once the next writer may go.
      if (wrote) await fsyncDirAsync(path.dirname(abs));
      return landed.done;
    }
    if (attempt >= 3)
      throw new ConflictError(
        `run file ${runFile} keeps changing to another run (now ${landed.moved}) while it is being written; stop whatever replaces it and run the command again`,
      );
    runId = landed.moved;
  }
}

/**
 * Write the run's pending stop requests into its chain (holding the run's lock), oldest first, as one write of
 * `stop_raised` events, then remove them. A request the checkpoint's last write already holds (a writer that died
 * between that write and removing it) is removed without being written again.
 */
async function foldStopRequests(
  home: GateHome,
  current: LoadedRun,
  runId: string,
  folded: Map<string, number>,
  write: (from: LoadedRun, events: EventDraft[]) => Promise<LoadedRun>,
): Promise<LoadedRun> {
  const pending = pendingStopRequests(home, runId);
  if (pending.length === 0) return current;
  const landed = requestsInLastWrite(home, runId, pending);
  const fresh = pending.filter((r) => !landed.has(r));
  let run = current;
  if (fresh.length > 0) {
    run = await write(current, fresh.map(stopRequestEvent));
    for (const [i, r] of fresh.entries()) folded.set(r.id, current.file.revision + i + 1);
  }
  removeStopRequests(home, runId, pending);
  return run;
}

/** The requests the checkpoint's last write holds already: it wrote only stops, each the event of one of them. */
function requestsInLastWrite(home: GateHome, runId: string, pending: readonly StopRequest[]): Set<StopRequest> {
  const found = new Set<StopRequest>();
  const cp = readCheckpoint(home, runId);
  const last = cp?.last_write.events ?? [];
  if (cp === undefined || !last.every((e) => e.type === "stop_raised")) return found;
  for (const e of last) {
    const data = e.data as { reason: string; workflow: string | null; note: string | null };
    const match = pending.find(
      (r) =>
        !found.has(r) &&
        r.actor === e.actor &&
        r.reason === data.reason &&
        r.workflow === data.workflow &&
        r.note === data.note &&
        r.at <= cp.updated_at,
    );
    if (match) found.add(match);
  }
  return found;
}

/**
 * A decision's writes, holding the run's lock: the checkpoint, the home's effects of the new events, then the run
 * file, each atomic, and the run remembered by the sha256 of the bytes written. Everything runs off the event loop and
 * in two rounds of fsyncs, since the run's queue waits behind the holder: first, at once, the checkpoint's new bytes,
 * the run file's new bytes, and the run file's folder (which makes the rename of the decision before this one durable,
 * whichever process made it); then, the checkpoint renamed into place, its folder, before the run file is renamed.
 * The run file's folder is fsynced for this rename after the lock is let go (`updateRun`), so the queue does not wait
 * for it. Whatever a crash leaves is a state the home reads: both files old, the checkpoint new and the run file one
 * write behind it (rolled forward by the checkpoint's events), or both new — never a checkpoint two writes ahead,
 * since the next decision makes this rename durable before its own checkpoint is renamed, nor a run file ahead.
 */
async function writeDecision(home: GateHome, abs: string, checkpoint: Checkpoint, next: RunFile): Promise<void> {
  removeDeadTempFiles(abs);
  const [checkpointBytes, runBytes, lastRename] = await Promise.allSettled([
    prepareCheckpointWrite(home, checkpoint),
    prepareAtomicWrite(abs, runFileChunks(next)),
    fsyncDirAsync(path.dirname(abs)),
  ]);
  const failed = [checkpointBytes, runBytes, lastRename].find((p): p is PromiseRejectedResult => p.status === "rejected");
  if (failed || checkpointBytes.status === "rejected" || runBytes.status === "rejected") {
    for (const p of [checkpointBytes, runBytes]) if (p.status === "fulfilled") await p.value.abort();
    throw failed?.reason;
  }
  try {
    await checkpointBytes.value.commit();
    applyHomeEffects(home, checkpoint.last_write.events, checkpoint.run_id);
  } catch (error) {
    await runBytes.value.abort();
    throw error;
  }
  await runBytes.value.commit({ syncFolder: false });
  rememberWrittenRun(abs, runBytes.value.digest, next);
}

/**
 * Replace the run file (holding its run's lock) with `run`, a run this process verified or made: atomically and
 * durably, written in slices off the event loop, and remembered by the sha256 of the bytes written.
 */
async function writeRunFile(abs: string, run: RunFile): Promise<void> {
  removeDeadTempFiles(abs);
  rememberWrittenRun(abs, await atomicWriteChunks(abs, runFileChunks(run)), run);
}

/**
 * Restore a run file into the home it was created in (an export, or a
 * backup of a lost file): verified first, its frozen bytes checked against
 * their sha256 into the home, then the checkpoint and the file. Only a run
 * exactly at the home's checkpoint (or one the home no longer records) is
 * restored, and only where no copy of it still is: an older copy is a
 * rollback, another a fork. A run of another home is refused: a
 * folder-store run belongs to its home, a team store takes any.
 */
export async function importRunFile(
  runFile: string,
  home: GateHome,
  file: RunFile,
  frozen: (entry: ManifestEntry) => Buffer,
): Promise<LoadedRun> {
  const verdict = verifyRunFile(file);
  if (!verdict.ok) throw new IntegrityError(`the run to import does not verify: ${verdict.reason}`, { seq: verdict.seq });
  const runId = file.state.run_id;
  if (file.state.home_id !== home.id)
    throw new IntegrityError(
      `run ${runId} was created in gate home ${file.state.home_id}, not in this one (${home.id}); a run file stays with its home — import it into a team store (--store postgres://…) instead`,
      { code: "OTHER_HOME" },
    );
  await requireTrustedGateSignatures(home, file);
  const abs = resolveRunFile(runFile);
  return importUnderLocks(abs, runFile, runId, home, file, frozen);
}

/**
 * The import's locks, in the order every writer takes them (the run's path, the run, then the home's blobs), so an
 * import never waits for a run's lock while holding the blobs lock a freeze of that run waits for.
 */
async function importUnderLocks(
  abs: string,
  runFile: string,
  runId: string,
  home: GateHome,
  file: RunFile,
  frozen: (entry: ManifestEntry) => Buffer,
): Promise<LoadedRun> {
  const gate = await ensureGateKey(home);
  return withRunPathLock(home, abs, async () => {
    if (exists(abs)) throw new RefusalError(`run file ${runFile} already exists; import under another name`, { code: "RUN_EXISTS" });
    // The frozen bytes and the run's record of them land under the blobs lock, so the collector never takes them between.
    return withCheckpointLock(home, runId, () =>
      withBlobsLock(home, () => {
        const known = readCheckpoint(home, runId);
        // The home's record of the run decides: a file at exactly its checkpoint is a restore; anything else never replaces it.
        if (known && (known.seq !== file.revision || known.head !== file.head))
          throw new RefusalError(
            `run ${runId} is in this gate home at revision ${known.seq}${known.run_file ? ` (${known.run_file})` : ""}, and the import is at revision ${file.revision}; an import restores a run exactly as the home recorded it, never an older or other copy`,
            { code: "RUN_EXISTS", attack: known.seq > file.revision ? "rollback" : "fork" },
          );
        if (known?.run_file !== undefined && known.run_file !== abs && exists(known.run_file))
          throw new RefusalError(`run ${runId} is in this gate home at ${known.run_file}, which still exists; continue that run file`, {
            code: "RUN_EXISTS",
          });
        // Exactly at the home's own checkpoint it is a restore of what the home recorded; else only a finished run comes in.
        if (!known) requireFinishedForImport(file, `gate home ${home.dir}`);
        for (const entry of frozenFilesOf(file.events)) storeFetchedBlob(home, entry.sha256, frozen(entry));
        // The home records the head it restores as its own checkpoint, signed by its own key.
        const restored: RunFile = { ...file, gate_signature: signHead(file, gate, "checkpoint") };
        writeCheckpoint(home, {
          format: "twinlock-checkpoint/1",
          run_id: runId,
          home_id: home.id,
          seq: file.revision,
          head: file.head,
          last_write: { from_seq: 0, from_head: GENESIS, events: file.events },
          updated_at: new Date().toISOString(),
          run_file: abs,
          gate_signature: restored.gate_signature,
        });
        applyHomeEffects(home, file.events, runId);
        for (const c of consentHashesOf(file))
          markConsentConsumed(home, { run_id: runId, planner: c.planner, executor: c.executor, consent_hash: c.hash, at: c.at });
        atomicWriteFile(abs, serializeRunFile(restored));
        return { path: abs, file: restored, state: file.state };
      }),
    );
  });
}

/**
 * What recorded events change in the home itself: an admission consumes its
 * consent there; a freeze records the frozen files the run uses (what the
 * collector of `twinlock home gc` keeps).
 */
function applyHomeEffects(home: GateHome, events: readonly RunEvent[], runId: string): void {
  const frozen = frozenFilesOf(events);
  if (frozen.length > 0) recordRunBlobs(home, runId, frozen);
  for (const e of events) {
    if (e.type !== "admitted") continue;
    const receipt = e.data.receipt as { consent_hash: string; planner: string; executor: string };
    markConsentConsumed(home, {
      run_id: runId,
      planner: receipt.planner,
      executor: receipt.executor,
      consent_hash: receipt.consent_hash,
      at: e.at,
    });
  }
}

function exists(abs: string): boolean {
  requirePlainPath(abs, "run file");
  try {
    lstatSync(abs);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return false;
    if (code === "EACCES" || code === "EPERM") return true;
    throw new UsageError(`run file ${abs} cannot be used (${code}); give a shorter or valid path`, { cause: error });
  }
}

/** How much of a run file is read to peek at its run ID (`state.run_id` comes in its first lines). */
const PEEK_BYTES = 16 * 1024;

/**
 * The run ID a run file names near its start, unverified (the file is read
 * and verified again under the run's lock): undefined when it cannot tell.
 */
function peekRunId(abs: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(PEEK_BYTES);
    const n = readSync(fd, buffer, 0, PEEK_BYTES, 0);
    return /^\{\s*"format": "[^"]{1,40}",\s*"revision": \d{1,15},\s*"head": "[^"]{1,100}",\s*"state": \{\s*"run_id": "(run_[0-9a-f]{16})"/.exec(
      buffer.subarray(0, n).toString("latin1"),
    )?.[1];
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
