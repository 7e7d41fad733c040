import "../schemas/zod-setup.js";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod/mini";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { applyEventOwned } from "../run/apply-event.js";
import { hashEvent } from "../run/event-chain.js";
import { EventSchema, HeadSignatureSchema, handoffHash, homeId, type RunEvent, type RunFile, runId } from "../run/run-schema.js";
import { lazySchema } from "../schemas/lazy-schema.js";
import { atomicWriteFile, type PreparedWrite, prepareAtomicWrite } from "../store/atomic-write.js";
import { withQueueLock } from "../store/queue-lock.js";
import { type GateHome, homeSubdir, listHomeSubdir } from "./gate-home.js";

/**
 * A run's checkpoint in the gate home (SPEC §9): the chain head the home last
 * recorded, and the events of that last write. The home is written first, so
 * a crash before the run file is replaced is recovered by rolling the file
 * forward with those events; a run file that is behind, ahead of, or beside
 * the checkpoint is refused.
 */
export const CheckpointSchema = lazySchema("run-checkpoints.CheckpointSchema", () =>
  z.strictObject({
    format: z.literal("twinlock-checkpoint/1"),
    run_id: runId,
    home_id: homeId,
    seq: z.number().check(z.int(), z.gte(1)),
    head: handoffHash,
    last_write: z.strictObject({
      from_seq: z.number().check(z.int(), z.gte(0)),
      from_head: handoffHash,
      events: z.array(EventSchema).check(z.minLength(1)),
    }),
    updated_at: z.string(),
    /** The run file this checkpoint was last written for (absolute path), so the home can list its runs. */
    run_file: z.optional(z.string().check(z.maxLength(4096))),
    /** The gate's signature of this head (absent from checkpoints written before gates signed). */
    gate_signature: z.optional(HeadSignatureSchema),
  }),
);
export type Checkpoint = z.infer<typeof CheckpointSchema>;

function checkpointFile(home: GateHome, id: string): string {
  if (!runId.safeParse(id).success) throw new IntegrityError(`run ID ${JSON.stringify(id)} is not a twinlock run ID`);
  return path.join(home.dir, "runs", `${id}.json`);
}

/** The home's checkpoint of a run, or undefined when the home has none. */
export function readCheckpoint(home: GateHome, id: string): Checkpoint | undefined {
  const file = checkpointFile(home, id);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UsageError(`cannot read checkpoint ${file} (${(error as NodeJS.ErrnoException).code}); fix the gate home's permissions`, {
      code: "HOME_UNREADABLE",
    });
  }
  let parsed: ReturnType<typeof CheckpointSchema.safeParse> | undefined;
  try {
    parsed = CheckpointSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success)
    throw new IntegrityError(`checkpoint ${file} is damaged; the run cannot be trusted — start a new run with init-run`, {
      code: "HOME_DAMAGED",
    });
  return parsed.data;
}

/** Record a run's new head and the events that led to it (durably, before the run file is replaced). */
export function writeCheckpoint(home: GateHome, checkpoint: Checkpoint): void {
  homeSubdir(home, "runs");
  atomicWriteFile(checkpointFile(home, checkpoint.run_id), `${JSON.stringify(checkpoint)}\n`, 0o600);
}

/**
 * `writeCheckpoint` for a server, in two halves: the new checkpoint written and fsynced beside the old one (off the
 * event loop), then put in its place by `commit` (rename, fsync of the folder), so a writer can fsync the run file's
 * new bytes at the same time and still land the checkpoint first.
 */
export async function prepareCheckpointWrite(home: GateHome, checkpoint: Checkpoint): Promise<PreparedWrite> {
  homeSubdir(home, "runs");
  return prepareAtomicWrite(checkpointFile(home, checkpoint.run_id), [`${JSON.stringify(checkpoint)}\n`], 0o600);
}

/** The IDs of the runs the home holds a checkpoint file of (`runs/RUN_ID.json`). */
function checkpointIds(home: GateHome): string[] {
  return listHomeSubdir(home, "runs").flatMap((name) => /^(run_[0-9a-f]{16})\.json$/.exec(name)?.[1] ?? []);
}

/** Every checkpoint in the home (a damaged one is skipped: reading that run refuses it by name). */
export function listCheckpoints(home: GateHome): Checkpoint[] {
  const found: Checkpoint[] = [];
  for (const id of checkpointIds(home)) {
    try {
      const cp = readCheckpoint(home, id);
      if (cp) found.push(cp);
    } catch {
      // Listed runs are only a convenience; reading the run names the damage.
    }
  }
  return found;
}

/**
 * The runs whose checkpoint in the home records `absRunFile` as their run file (what the home knows lives at that
 * path, whatever the file holds now): each checkpoint's bytes are searched for the path, and a hit is read in full
 * to confirm it. A damaged checkpoint is skipped (reading that run refuses it by name).
 */
export function runsRecordedAt(home: GateHome, absRunFile: string): string[] {
  const needle = Buffer.from(`"run_file":${JSON.stringify(absRunFile)}`);
  const found: string[] = [];
  for (const id of checkpointIds(home)) {
    try {
      if (!readFileSync(checkpointFile(home, id)).includes(needle)) continue;
      if (readCheckpoint(home, id)?.run_file === absRunFile) found.push(id);
    } catch {
      // Gone or damaged since the listing.
    }
  }
  return found;
}

/**
 * Run `fn` holding the home's lock of one run (`runs/RUN_ID.queue/`, a fair
 * queue: see `withQueueLock`): the one lock of a run's writes, kept where the
 * agent cannot write, so it can neither hold it nor jump its queue.
 */
export async function withCheckpointLock<T>(
  home: GateHome,
  id: string,
  fn: () => T | Promise<T>,
  options: { waitMs?: number } = {},
): Promise<T> {
  // The queue folder is made by withQueueLock when it is not there, in the runs folder made here (never under a home that is gone).
  const file = checkpointFile(home, id);
  homeSubdir(home, "runs");
  return withQueueLock(file.replace(/\.json$/, ".queue"), fn, `run ${id}`, options);
}

/**
 * Run `fn` holding the home's lock of a run file's path (`runs/file-HASH.queue/`):
 * creating or importing a run at a path, before the file (and so its run ID) exists.
 */
export async function withRunPathLock<T>(home: GateHome, absRunFile: string, fn: () => T | Promise<T>): Promise<T> {
  const hash = createHash("sha256").update(absRunFile).digest("hex").slice(0, 32);
  return withQueueLock(path.join(homeSubdir(home, "runs"), `file-${hash}.queue`), fn, `run file ${absRunFile}`);
}

/** A run file set against its checkpoint: itself, or rolled forward by the checkpoint's last write. */
export interface Reconciled {
  file: RunFile;
  /** The events the home recorded that the file was missing (a crash between the two writes). */
  rolledForward: RunEvent[];
}

/**
 * Set a verified run file against the home's checkpoint (fast-forward only).
 * Equal heads: the file. The file exactly one write behind: rolled forward
 * with the checkpoint's events (recovery after a crash between the two
 * writes). Anything else — no checkpoint, another home, a file behind
 * (restored copy), ahead of or beside the checkpoint (hand-made events, a
 * fork) — is an IntegrityError naming the checkpoint and what the file has.
 */
export function reconcileWithCheckpoint(home: GateHome, file: RunFile, runFile: string): Reconciled {
  const state = file.state;
  if (state.home_id !== home.id)
    throw new IntegrityError(
      `run ${state.run_id} (${runFile}) belongs to gate home ${state.home_id}, not to this one (${home.id} at ${home.dir}); point --home or TWINLOCK_HOME at the home it was created in, or start a new run here`,
      { code: "OTHER_HOME", check: "checkpoint", attack: "other-home" },
    );
  const cp = readCheckpoint(home, state.run_id);
  if (!cp)
    throw new IntegrityError(
      `gate home ${home.dir} has no checkpoint for run ${state.run_id} (${runFile}): its checkpoint was deleted or the run was never recorded here; twinlock will not trust a run it cannot place — start a new run with init-run`,
      { code: "CHECKPOINT_MISMATCH", check: "checkpoint", attack: "missing-checkpoint" },
    );
  if (file.revision === cp.seq && file.head === cp.head) return { file, rolledForward: [] };
  const lw = cp.last_write;
  if (file.revision === lw.from_seq && file.head === lw.from_head)
    return { file: rollForward(file, lw.events, cp), rolledForward: lw.events };
  const where = `the gate home recorded event ${cp.seq} with head ${cp.head.slice(0, 19)}…, the file has event ${file.revision} with head ${file.head.slice(0, 19)}…`;
  const atCp = file.events[cp.seq - 1];
  if (file.revision < cp.seq)
    throw new IntegrityError(
      `run file ${runFile} is behind its checkpoint (${where}): it was rolled back or restored from an older copy; use the current run file`,
      { code: "CHECKPOINT_MISMATCH", check: "checkpoint", attack: "rollback" },
    );
  if (atCp && hashEvent(atCp) === cp.head)
    throw new IntegrityError(
      `run file ${runFile} has events ${cp.seq + 1}–${file.revision} that the gate home never recorded (${where}); they were added by hand or by another home`,
      { code: "CHECKPOINT_MISMATCH", check: "checkpoint", attack: "unrecorded-events" },
    );
  throw new IntegrityError(
    `run file ${runFile} does not extend its checkpoint (${where}): its history was rewritten or it is a fork of another copy`,
    { code: "CHECKPOINT_MISMATCH", check: "checkpoint", attack: "fork" },
  );
}

function rollForward(file: RunFile, events: readonly RunEvent[], cp: Checkpoint): RunFile {
  // Copied once and changed in place by each event: linear in the events, and the file keeps its state.
  let state = structuredClone(file.state);
  let prev = file.head;
  for (const [i, e] of events.entries()) {
    if (e.prev !== prev || e.seq !== file.events.length + i + 1)
      throw new IntegrityError(`checkpoint of run ${cp.run_id} holds events that do not follow the run file; the home is damaged`, {
        code: "HOME_DAMAGED",
        check: "checkpoint",
      });
    state = applyEventOwned(state, e);
    prev = hashEvent(e);
  }
  if (prev !== cp.head)
    throw new IntegrityError(`checkpoint of run ${cp.run_id} is inconsistent; the home is damaged`, {
      code: "HOME_DAMAGED",
      check: "checkpoint",
    });
  const { gate_signature: _stale, ...rest } = file;
  // The file's own head signature was for its old head; the checkpoint's is for the head it is rolled forward to.
  return {
    ...rest,
    revision: cp.seq,
    head: cp.head,
    state,
    events: [...file.events, ...events],
    ...(cp.gate_signature ? { gate_signature: cp.gate_signature } : {}),
  };
}
