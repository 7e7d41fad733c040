import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import path from "node:path";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { describeJsonError, requirePlainPath, requireShallowJson } from "../input/parse-input.js";
import { applyEvent, replayEvents } from "../run/apply-event.js";
import { GENESIS, hashEvent, verifyChain } from "../run/event-chain.js";
import { type EventType, RUN_FORMAT, type RunEvent, type RunFile, RunFileSchema, type RunState } from "../run/run-schema.js";
import type { GateKey } from "../trust/gate-key.js";
import { signGateRecord, signHead } from "../trust/gate-statement.js";

/** A new event as a command decides it; the store numbers, times and chains it. */
export interface EventDraft {
  type: EventType;
  actor: string;
  data: Record<string, unknown>;
}

/** A run file read and verified: its chain holds and its state is what replay gives. */
export interface LoadedRun {
  path: string;
  file: RunFile;
  state: RunState;
}

/** Largest run file read. */
export const MAX_RUN_FILE_BYTES = 256 * 1024 * 1024;

/**
 * Read a run file and verify it before anyone acts on it (SPEC §7): JSON,
 * schema, hash chain, and the stored state equal to the replay of the events.
 * Unreadable or malformed input is a UsageError (exit 2); a broken chain or a
 * state that replay does not give is an IntegrityError naming the first bad event.
 */
export function readRunFile(file: string): LoadedRun {
  const abs = path.resolve(file);
  const { run, digest } = readRunFileBytes(file);
  // Bytes this process already verified verify the same way again: a long-lived server skips the replay.
  if (verifiedBytes.get(abs) === digest) return { path: abs, file: run, state: run.state };
  const verdict = verifyRunFile(run);
  if (!verdict.ok) {
    const hint = verdict.check === "state" ? ` — run \`twinlock verify-log ${file}\`` : "";
    throw new IntegrityError(`run file ${file}: ${verdict.reason}${hint}`, { seq: verdict.seq });
  }
  if (verifiedBytes.size >= 10_000) verifiedBytes.clear();
  verifiedBytes.set(abs, digest);
  return { path: abs, file: run, state: verdict.state };
}

/** The sha256 of the bytes of each run file this process verified last (a verdict depends only on the bytes). */
const verifiedBytes = new Map<string, string>();

/** Where a run file stops being trustworthy, or the state its events replay to. */
export type RunFileVerdict =
  | { ok: true; state: RunState }
  | { ok: false; check: "chain" | "revision" | "replay" | "state"; seq: number; reason: string };

/**
 * The one verification of a parsed run file (used by every reader and by
 * `verify-log`): the hash chain, the revision counter, the replay of every
 * event through the transition rules, and the stored state equal to that replay.
 */
export function verifyRunFile(run: RunFile): RunFileVerdict {
  const chain = verifyChain(run.events, run.head);
  if (!chain.ok) return { ok: false, check: "chain", seq: chain.seq, reason: `hash chain broken at event ${chain.seq}: ${chain.reason}` };
  if (run.revision !== run.events.length) {
    return {
      ok: false,
      check: "revision",
      seq: run.events.length,
      reason: `revision ${run.revision} does not match its ${run.events.length} events`,
    };
  }
  let state: RunState;
  try {
    state = replayEvents(run.events);
  } catch (error) {
    if (!(error instanceof IntegrityError)) throw error;
    return { ok: false, check: "replay", seq: (error.details.seq as number | undefined) ?? run.events.length, reason: error.message };
  }
  if (canonicalJson(state) !== canonicalJson(run.state)) {
    return {
      ok: false,
      check: "state",
      seq: run.events.length,
      reason: "the stored state differs from the replay of its events (receipts, states, authorized executors); it was edited by hand",
    };
  }
  return { ok: true, state };
}

/**
 * Number, time and chain new events onto a run (or start one), applying each
 * to the state. With the gate's key, each record the gate makes is signed as
 * it is chained, and the new head is signed as the gate's checkpoint.
 */
export function appendTo(run: RunFile | undefined, drafts: EventDraft[], now: Date, gate?: GateKey): RunFile {
  const events = run ? [...run.events] : [];
  let state: RunState | undefined = run?.state;
  let prev = run ? run.head : GENESIS;
  const at = now.toISOString();
  for (const d of drafts) {
    let event: RunEvent = { seq: events.length + 1, at, actor: d.actor, type: d.type, data: d.data, prev };
    state = applyEvent(state, event);
    if (gate) event = signGateRecord(event, state.run_id, gate);
    events.push(event);
    prev = hashEvent(event);
  }
  if (!state) throw new Error("appendTo needs at least one event");
  const file: RunFile = { format: RUN_FORMAT, revision: events.length, head: prev, state, events };
  return gate ? { ...file, gate_signature: signHead(file, gate, "checkpoint") } : file;
}

/** The run file's bytes on disk. */
export function serializeRunFile(run: RunFile): string {
  return `${JSON.stringify(run, null, 1)}\n`;
}

function readBytes(abs: string): Buffer {
  requirePlainPath(abs, "run file");
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO put in the run file's place must not hang the process.
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === "ENOENT"
        ? `run file ${abs} does not exist; create it with \`twinlock init-run\``
        : code === "ELOOP"
          ? `run file ${abs} is a symbolic link; give the run file itself`
          : `cannot read run file ${abs} (${code}); fix its permissions`,
      { cause: error },
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile())
      throw new UsageError(
        `run file ${abs} is not a regular file (${stat.isFIFO() ? "a FIFO" : stat.isSocket() ? "a socket" : stat.isDirectory() ? "a folder" : "a device"}); give a twinlock run file`,
      );
    if (stat.size > MAX_RUN_FILE_BYTES)
      throw new UsageError(
        `run file ${abs} is ${stat.size} bytes, over the ${MAX_RUN_FILE_BYTES}-byte limit; it is not a twinlock run file`,
      );
    const buffer = Buffer.allocUnsafe(stat.size);
    let read = 0;
    while (read < stat.size) {
      const n = readSync(fd, buffer, read, stat.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * Read a run file's JSON and schema without trusting it: for reports that
 * must still say something when the chain is broken (admission, verify-log).
 */
export function readRunFileUnverified(file: string): RunFile {
  return readRunFileBytes(file).run;
}

/** A run file parsed against its schema (not verified), with the sha256 of the bytes it was parsed from. */
function readRunFileBytes(file: string): { run: RunFile; digest: string } {
  let json: unknown;
  let digest: string;
  try {
    const bytes = readBytes(path.resolve(file));
    digest = createHash("sha256").update(bytes).digest("hex");
    json = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `run file ${file} is not valid JSON (${describeJsonError(error)}); it may be truncated — restore it from backup or create a new run with init-run`,
      { cause: error },
    );
  }
  requireShallowJson(json, `run file ${file}`);
  const format = (json as { format?: unknown } | null)?.format;
  if (typeof format === "string" && format !== RUN_FORMAT && format.startsWith("twinlock-run/"))
    throw new UsageError(
      format === "twinlock-run/1"
        ? `run file ${file} is format ${format}, made by an older twinlock without a gate home; its decisions cannot be trusted now and it is not upgraded — start a new run with \`twinlock init-run\``
        : `run file ${file} is format ${format}, made by another twinlock (this one reads ${RUN_FORMAT}); use that version, or start a new run with \`twinlock init-run\``,
    );
  const parsed = RunFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `run file ${file} does not match the run-file schema at ${issue?.path.join(".") || "(top level)"}: ${issue?.message}; it was edited by hand or by another tool`,
    );
  }
  return { run: parsed.data, digest };
}
