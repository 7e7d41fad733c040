import { createHash } from "node:crypto";
import { type BigIntStats, closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import path from "node:path";
import type { ZodMiniType } from "zod/mini";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { IntegrityError, UsageError } from "../errors/errors.js";
import type { GateHome } from "../home/gate-home.js";
import {
  BUDGETS,
  BudgetError,
  type JsonShape,
  JsonShapeScanner,
  requireBytesWithin,
  requireJsonWithin,
  requireShapeWithin,
} from "../input/budgets.js";
import { describeJsonError, MAX_JSON_DEPTH, requirePlainPath, requireShallowJson } from "../input/parse-input.js";
import { type CarriedError, carry, revive, runOffThread } from "../offload/run-off-thread.js";
import { applyEventOwned, EVENT_DATA, replayEvents } from "../run/apply-event.js";
import { GENESIS, hashEvent, verifyChain } from "../run/event-chain.js";
import { type EventType, RUN_FORMAT, type RunEvent, type RunFile, RunFileSchema, type RunState } from "../run/run-schema.js";
import { safeParseFirstIssue } from "../schemas/first-issue.js";
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

/** Largest run file read (the run file's byte budget, src/input/budgets.ts). */
export const MAX_RUN_FILE_BYTES = BUDGETS.runFile.bytes;

/**
 * Read a run file and verify it before anyone acts on it (SPEC §7): its
 * budget (bytes, nesting, elements) before parsing, then JSON, schema, hash
 * chain, and the stored state equal to the replay of the events.
 * Unreadable, oversized or malformed input is a UsageError (exit 2); a
 * broken chain or a state that replay does not give is an IntegrityError
 * naming the first bad event.
 *
 * The file is read in slices, each hashed and scanned for the budget as it
 * comes: a file whose first bytes are already over the budget (millions of
 * empty events) is refused without reading the rest. Bytes this process
 * judged before are not parsed again: the run they parsed to (frozen, so no
 * caller can change what the next read gets), or the refusal they got, is
 * kept under the sha256 of those very bytes, which an agent rewriting the
 * file cannot match with other bytes, whatever size and time it gives them.
 */
export function readRunFile(file: string): LoadedRun {
  return runToEnd(loadRunFile(file, true)) as LoadedRun;
}

/**
 * `readRunFile` for a server: the same reading and the same answer, but the
 * event loop runs between slices of the file, so a large run file (or an
 * agent's junk in its place) never holds up other requests for the whole read.
 *
 * One caller cannot take the server's reads: asks for a run file while a read
 * of it is under way join the one read that starts after it (begun after they
 * asked, so none gets bytes older than its ask), so a flood of requests for
 * one run holds one of the MAX_READS_IN_FLIGHT slots, never all of them.
 * New bytes larger than a slice are parsed, checked and replayed on a worker
 * thread (`runOffThread`): the thread's own cost of a new 16 MiB file is the
 * messages and, for a run that verifies, taking the run back; a refusal comes
 * back as its few words. With a `placement`, a new run that verifies but that
 * its home would refuse is refused there too, never carried back whole.
 */
export async function readRunFileAsync(file: string, placement?: RunPlacement): Promise<LoadedRun> {
  const key = `${path.resolve(file)}\0${file}\0${placement?.home.dir ?? ""}`;
  try {
    // Each caller its own answer object (the run inside is frozen), and its own copy of a refusal.
    return { ...(await runFileFlights.join(key, () => readOnceAsync(file, placement))) };
  } catch (error) {
    throw error instanceof UsageError || error instanceof IntegrityError ? copyOfRefusal(error) : error;
  }
}

/**
 * Work of one key joined (single flight): an ask while none is under way starts one; an ask while one is under way
 * joins the next, which starts when that one ends and which every ask until then shares. At most one runs per key at
 * a time, and no answer comes from work begun before it was asked for.
 */
class Flights<T> {
  private readonly byKey = new Map<string, { running: Promise<T>; next?: Promise<T> }>();

  join(key: string, start: () => Promise<T>): Promise<T> {
    const flight = this.byKey.get(key);
    if (!flight) return this.begin(key, start);
    if (!flight.next) {
      const after = () => this.begin(key, start);
      flight.next = flight.running.then(after, after);
    }
    return flight.next;
  }

  private begin(key: string, start: () => Promise<T>): Promise<T> {
    const running = start();
    this.byKey.set(key, { running });
    const done = () => {
      const flight = this.byKey.get(key);
      if (flight?.running === running && !flight.next) this.byKey.delete(key);
    };
    running.then(done, done);
    return running;
  }
}

const runFileFlights = new Flights<LoadedRun>();

/** How many times `readRunFileAsync` has read a run file's bytes in this process (joined asks share one read). */
let runFileReads = 0;

/** The run-file reads `readRunFileAsync` has made so far (a flood of asks for one file costs one read at a time). */
export function runFileReadsMade(): number {
  return runFileReads;
}

/** New bytes larger than this are judged on a worker thread; smaller ones (a few ms of work) on the calling thread. */
const OFF_THREAD_BYTES = 256 * 1024;

/** One read of `readRunFileAsync`: the bytes in slices under a read slot, then judged (off the thread when new and large). */
async function readOnceAsync(file: string, placement: RunPlacement | undefined): Promise<LoadedRun> {
  // At most MAX_READS_IN_FLIGHT files' bytes held at once, however many requests ask (each may be 16 MiB).
  await takeReadSlot();
  try {
    runFileReads++;
    const abs = path.resolve(file);
    // Bytes in memory the worker thread shares: handing them over copies nothing (a copy of 16 MiB held the thread).
    const steps = readHashedWithinBudget(abs, `run file ${file}`, true, (digest) => answerable(abs, file, digest, true));
    let step = steps.next();
    while (!step.done) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      step = steps.next();
    }
    const read = step.value;
    if (read.bytes.length <= OFF_THREAD_BYTES || verifiedRuns.get(abs)?.digest === read.digest)
      return judgeRead(abs, file, read, true) as LoadedRun;
    const unplaced = unplacedRuns.get(abs);
    if (placement && unplaced?.digest === read.digest && unplaced.file === file && unplaced.home === placement.home.dir) {
      if (placement.recordOf(unplaced.runId) === unplaced.record) throw copyOfRefusal(unplaced.error);
    }
    if (judgedBefore(abs, file, read.digest)) return judgeRead(abs, file, read, true) as LoadedRun;
    return await judgeOffThread(abs, file, read, placement);
  } finally {
    giveBackReadSlot();
  }
}

/** Whether this process has a verdict on these bytes of this file (a verified run, or a refusal) that needs no parse. */
function judgedBefore(abs: string, file: string, digest: string): boolean {
  if (verifiedRuns.get(abs)?.digest === digest) return true;
  const refused = refusedRuns.get(abs);
  return refused?.digest === digest && refused.file === file;
}

/** New bytes parsed, checked and replayed on a worker thread; the verdict remembered by their sha256, as `judgeRead` does. */
async function judgeOffThread(abs: string, file: string, read: HashedRead, placement: RunPlacement | undefined): Promise<LoadedRun> {
  const { digest } = read;
  try {
    requireShapeWithin(BUDGETS.runFile, read.shape, `run file ${file}`);
  } catch (error) {
    rememberRefusal(abs, { digest, file, stage: "parse", error });
    throw error;
  }
  const home = placement ? { dir: placement.home.dir, id: placement.home.id } : undefined;
  const judged = await runOffThread("judgeRunFileBytes", { bytes: read.bytes, file, home });
  if (judged.ok === "parse") {
    const error = revive(judged.error);
    rememberRefusal(abs, { digest, file, stage: "parse", error });
    throw error;
  }
  if (judged.ok === "unplaced") {
    const error = revive(judged.error);
    if (home && judged.record !== undefined)
      keep(unplacedRuns, abs, { digest, file, home: home.dir, runId: judged.runId, record: judged.record, error });
    throw error;
  }
  if (judged.ok === "verify") {
    const error = refusalOf(judged.verdict, file);
    rememberRefusal(abs, { digest, file, stage: "verify", error });
    throw error;
  }
  remember(abs, digest, judged.run, judged.replayed);
  return { path: abs, file: judged.run, state: judged.run.state };
}

/**
 * What a reader that sets a run against its gate home's checkpoint (`readRunWaiting`) tells `readRunFileAsync`, so a
 * new run that verifies but that the home refuses (events it never recorded, a fork, another home's run) is refused
 * on the worker thread that verified it: such a run is never carried back whole (taking 16 MiB of events back costs
 * the thread more than parsing them).
 */
export interface RunPlacement {
  /** The gate home whose checkpoint the run is set against. */
  home: GateHome;
  /** The home's record of a run now (its checkpoint's revision, head and last write): a remembered refusal holds while it is the same. */
  recordOf(runId: string): string | undefined;
}

/**
 * Verified runs the home refused, by the sha256 of their bytes and the home's record of the run then: the refusal
 * depends on both, so it is given again only while the record is the same.
 */
const unplacedRuns = new Map<string, { digest: string; file: string; home: string; runId: string; record: string; error: unknown }>();

/**
 * What a check of a run file's bytes on a worker thread found: the parse's refusal, the verification's, the home's
 * refusal of a run that verified (with the home's record of the run it was set against; undefined: not to be
 * remembered), or the run.
 */
export type JudgedRunBytes =
  | { ok: "parse"; error: CarriedError }
  | { ok: "unplaced"; error: CarriedError; runId: string; record: string | undefined }
  | { ok: "verify"; verdict: Extract<RunFileVerdict, { ok: false }> }
  | { ok: true; run: RunFile; replayed: RunState };

/**
 * A run file's bytes (read within their byte and shape budget) parsed and verified from the first event, answered as
 * plain data to cross between threads: the task `readRunFileAsync` runs on a worker thread for new, large bytes.
 */
export function judgeRunFileBytes(input: { bytes: Uint8Array; file: string }): JudgedRunBytes {
  let run: RunFile;
  try {
    run = parseScannedRunFile(input.bytes, input.file);
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof IntegrityError)) throw error;
    return { ok: "parse", error: carry(error) };
  }
  const verdict = verifyRunFile(run);
  return verdict.ok ? { ok: true, run, replayed: verdict.state } : { ok: "verify", verdict };
}

/** Run files a server reads at once; the others wait their turn, in the order they asked. */
export const MAX_READS_IN_FLIGHT = 4;
let readsInFlight = 0;
const readsWaiting: Array<() => void> = [];

/** How many run-file reads of `readRunFileAsync` hold their bytes now (at most MAX_READS_IN_FLIGHT). */
export function runFileReadsInFlight(): number {
  return readsInFlight;
}

async function takeReadSlot(): Promise<void> {
  if (readsInFlight < MAX_READS_IN_FLIGHT) {
    readsInFlight++;
    return;
  }
  // The slot is handed over by the read that leaves (the count stays), so no newcomer takes it first.
  await new Promise<void>((resolve) => readsWaiting.push(resolve));
}

function giveBackReadSlot(): void {
  const next = readsWaiting.shift();
  if (next) next();
  else readsInFlight--;
}

/**
 * Read a run file's JSON and schema without trusting it: for reports that
 * must still say something when the chain is broken (admission, verify-log).
 */
export function readRunFileUnverified(file: string): RunFile {
  return runToEnd(loadRunFile(file, false)) as RunFile;
}

/** Bytes read and scanned at a time (between them `readRunFileAsync` lets the event loop run). */
const SLICE_BYTES = 256 * 1024;

/** Run a reader's steps without pausing between them. */
function runToEnd<T>(steps: Generator<undefined, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The one reader behind `readRunFile` (`verify`: the verified run) and
 * `readRunFileUnverified` (the parsed file): it pauses (yields) after each
 * slice it reads, and returns or throws its answer at the end.
 */
function* loadRunFile(file: string, verify: boolean): Generator<undefined, LoadedRun | RunFile> {
  const abs = path.resolve(file);
  const read = yield* readHashedWithinBudget(abs, `run file ${file}`, false, (digest) => answerable(abs, file, digest, verify));
  return judgeRead(abs, file, read, verify);
}

/** Whether `judgeRead` answers bytes of this sha256 from what it remembers, without the bytes themselves. */
function answerable(abs: string, file: string, digest: string, verify: boolean): boolean {
  if (verifiedRuns.get(abs)?.digest === digest) return true;
  const refused = refusedRuns.get(abs);
  return refused?.digest === digest && refused.file === file && (verify || refused.stage === "parse");
}

/** Bytes read within their budget judged: the verdict remembered for them, or parsed (and verified) and remembered. */
function judgeRead(abs: string, file: string, read: HashedRead, verify: boolean): LoadedRun | RunFile {
  const where = `run file ${file}`;
  const { bytes, digest } = read;
  const known = verifiedRuns.get(abs);
  if (known?.digest === digest) return verify ? { path: abs, file: known.run, state: known.run.state } : known.run;
  const refused = refusedRuns.get(abs);
  if (refused?.digest === digest && refused.file === file && (verify || refused.stage === "parse")) throw copyOfRefusal(refused.error);
  let run: RunFile;
  try {
    requireShapeWithin(BUDGETS.runFile, read.shape, where);
    run = parseScannedRunFile(bytes, file);
  } catch (error) {
    rememberRefusal(abs, { digest, file, stage: "parse", error });
    throw error;
  }
  if (!verify) return run;
  const verdict = verifyRunFile(run, known);
  if (!verdict.ok) {
    const error = refusalOf(verdict, file);
    rememberRefusal(abs, { digest, file, stage: "verify", error });
    throw error;
  }
  remember(abs, digest, run, verdict.state);
  return { path: abs, file: run, state: run.state };
}

/** The refusal of a run file whose verification failed, naming the first bad event. */
function refusalOf(verdict: Extract<RunFileVerdict, { ok: false }>, file: string): IntegrityError {
  const hint = verdict.check === "state" ? ` — run \`twinlock verify-log ${file}\`` : "";
  return new IntegrityError(`run file ${file}: ${verdict.reason}${hint}`, { seq: verdict.seq });
}

/** The run each run file's bytes parsed and verified to last in this process, by the sha256 of those bytes. */
const verifiedRuns = new Map<string, VerifiedRun & { digest: string }>();

/** A run verified before: the file as read (frozen), and the state its events replayed to (this module's own, never handed out). */
export interface VerifiedRun {
  run: RunFile;
  replayed: RunState;
}
/**
 * The refusal each run file's bytes got last in this process, by their sha256 (and the name the file was given, which
 * the refusal quotes): parsing, checking and replaying are a function of the bytes alone, so the same bytes get the
 * same refusal without that work again. `stage`: whether the bytes failed to parse, or parsed and failed to verify.
 */
const refusedRuns = new Map<string, Refusal>();
/** Runs (and refusals) kept at most: a server's runs, not every file a long-lived process ever read. */
const MAX_REMEMBERED = 64;

interface Refusal {
  digest: string;
  file: string;
  stage: "parse" | "verify";
  error: unknown;
}

function remember(abs: string, digest: string, run: RunFile, replayed: RunState): void {
  deepFreeze(run);
  refusedRuns.delete(abs);
  unplacedRuns.delete(abs);
  keep(verifiedRuns, abs, { digest, run, replayed });
}

/** Whether `events` begins with every one of `prefix`, each the same JSON value (keys in any order). */
function startsWith(events: readonly RunEvent[], prefix: readonly RunEvent[]): boolean {
  if (prefix.length === 0 || events.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (!sameJson(events[i], prefix[i])) return false;
  return true;
}

/** Two parsed JSON values equal (object keys in any order), compared without recursion. */
function sameJson(a: unknown, b: unknown): boolean {
  const stack: Array<[unknown, unknown]> = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop() as [unknown, unknown];
    if (x === y) continue;
    if (x === null || y === null || typeof x !== "object" || typeof y !== "object") return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    const xKeys = Object.keys(x);
    if (xKeys.length !== Object.keys(y).length) return false;
    for (const k of xKeys) {
      if (!Object.hasOwn(y, k)) return false;
      stack.push([(x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]]);
    }
  }
  return true;
}

function rememberRefusal(abs: string, refusal: Refusal): void {
  // Only the refusals of the bytes themselves; anything else (out of memory, a bug) is not a verdict on them.
  if (!(refusal.error instanceof UsageError || refusal.error instanceof IntegrityError)) return;
  keep(refusedRuns, abs, refusal);
}

function keep<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= MAX_REMEMBERED) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/** A new error saying what a remembered refusal said (a caller may change the one it caught). */
function copyOfRefusal(error: unknown): Error {
  if (error instanceof BudgetError) return new BudgetError(error.message, { ...error.overrun });
  if (error instanceof IntegrityError) return new IntegrityError(error.message, { ...error.details }, { cause: error.cause });
  const e = error as UsageError;
  return new UsageError(e.message, { cause: e.cause });
}

/** Freeze a parsed JSON value all the way down (iteratively: its depth is within the budget, but no recursion is needed). */
function deepFreeze(value: unknown): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object" || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v as object)) stack.push(child);
  }
}

/** Where a run file stops being trustworthy, or the state its events replay to. */
export type RunFileVerdict =
  | { ok: true; state: RunState }
  | { ok: false; check: "chain" | "revision" | "replay" | "state"; seq: number; reason: string };

/**
 * The one verification of a parsed run file (used by every reader and by
 * `verify-log`): the hash chain, the revision counter, the replay of every
 * event through the transition rules, and the stored state equal to that replay.
 */
export function verifyRunFile(run: RunFile, before?: VerifiedRun): RunFileVerdict {
  // A run verified before whose events this one starts with (equal, value for value): only the events after them are
  // checked and replayed, from that run's head and replayed state; the verdict is the one checking every event gives.
  const prefix = before !== undefined && startsWith(run.events, before.run.events) ? before : undefined;
  const from = prefix ? prefix.run.events.length : 0;
  const chain = verifyChain(run.events, run.head, prefix ? { length: from, head: prefix.run.head } : undefined);
  if (!chain.ok) return { ok: false, check: "chain", seq: chain.seq, reason: `hash chain broken at event ${chain.seq}: ${chain.reason}` };
  if (run.revision !== run.events.length) {
    return {
      ok: false,
      check: "revision",
      seq: run.events.length,
      reason: `revision ${run.revision} does not match its ${run.events.length} events`,
    };
  }
  // Each event's data against its schema, stopping at the first issue, before replay asks zod (which would collect an
  // issue per bad element of a huge array, past the stack).
  for (const event of run.events.slice(from)) {
    const parsed = safeParseFirstIssue(EVENT_DATA[event.type] as ZodMiniType, event.data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        check: "replay",
        seq: event.seq,
        reason: `event ${event.seq} (${event.type}) is invalid: its data does not match the ${event.type} schema (${issue.path.join(".")}: ${issue.message})`,
      };
    }
  }
  let state: RunState;
  try {
    if (prefix) {
      // The replay's own copy of the state the run before replayed to, carried on by the new events.
      state = structuredClone(prefix.replayed);
      for (const event of run.events.slice(from)) state = applyEventOwned(state, event);
    } else state = replayEvents(run.events);
  } catch (error) {
    if (!(error instanceof IntegrityError)) throw error;
    return { ok: false, check: "replay", seq: (error.details.seq as number | undefined) ?? run.events.length, reason: error.message };
  }
  // The same value, key for key, is the same canonical JSON; only when not is the canonical form (which, for one, leaves
  // out a key whose value is undefined) the judge.
  if (!sameJson(state, run.state) && canonicalJson(state) !== canonicalJson(run.state)) {
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
  return withAppended(run, appendEvents({ state: run?.state, head: run?.head, revision: run?.revision ?? 0, drafts, now, gate }), gate);
}

/** The run `appendEvents` carried on: its events and the new ones, the state and head they lead to, the head signed. */
function withAppended(run: RunFile | undefined, appended: AppendedEvents, gate: GateKey | undefined): RunFile {
  const events = run ? [...run.events, ...appended.events] : appended.events;
  const file: RunFile = { format: RUN_FORMAT, revision: events.length, head: appended.head, state: appended.state, events };
  return gate ? { ...file, gate_signature: signHead(file, gate, "checkpoint") } : file;
}

/** New events numbered, timed, chained and applied: the events, and the state and head they lead to. */
export interface AppendedEvents {
  events: RunEvent[];
  state: RunState;
  head: string;
}

/**
 * What `appendTo` adds to a run, from the run's state, head and revision alone (not its events): so it can run on
 * a worker thread, given those and the drafts (`appendToAsync`). The caller's state is copied, never changed.
 */
export function appendEvents(input: {
  state: RunState | undefined;
  head: string | undefined;
  revision: number;
  drafts: EventDraft[];
  now: Date;
  gate?: GateKey;
}): AppendedEvents {
  const { drafts, gate } = input;
  const events: RunEvent[] = [];
  // One copy of the caller's state, then each event changes it in place: the caller keeps its run as it was.
  let state: RunState | undefined = input.state ? structuredClone(input.state) : undefined;
  let prev = input.head ?? GENESIS;
  const at = input.now.toISOString();
  for (const d of drafts) {
    let event: RunEvent = { seq: input.revision + events.length + 1, at, actor: d.actor, type: d.type, data: d.data, prev };
    state = applyEventOwned(state, event);
    if (gate) event = signGateRecord(event, state.run_id, gate);
    events.push(event);
    prev = hashEvent(event);
  }
  if (!state) throw new Error("appendTo needs at least one event");
  return { events, state, head: prev };
}

/** Drafts with more values than this (a freeze's manifest of thousands of files) are applied on a worker thread. */
const OFF_THREAD_DRAFT_VALUES = 2_000;

/**
 * `appendTo` for a server: drafts of agent-sized data (a manifest of thousands of files, each checked against its
 * schema, applied and hashed into the chain) are applied on a worker thread, so the event loop pays only for the
 * messages; small drafts on the calling thread. The same run either way.
 */
export async function appendToAsync(run: RunFile, drafts: EventDraft[], now: Date, gate?: GateKey): Promise<RunFile> {
  if (!valuesOver(drafts, OFF_THREAD_DRAFT_VALUES)) return appendTo(run, drafts, now, gate);
  const appended = await runOffThread("appendRunEvents", { state: run.state, head: run.head, revision: run.revision, drafts, now, gate });
  return withAppended(run, appended, gate);
}

/** Whether a JSON value holds more than `limit` values (counted without recursion, and only up to the limit). */
function valuesOver(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  let seen = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    if (++seen > limit) return true;
    if (v !== null && typeof v === "object") for (const child of Object.values(v as object)) stack.push(child);
  }
  return false;
}

/** The run file's bytes on disk. */
export function serializeRunFile(run: RunFile): string {
  return `${JSON.stringify(run, null, 1)}\n`;
}

/**
 * `serializeRunFile`'s text, character for character, as chunks made one at a
 * time as they are asked for: the file's top level, its state's and events'
 * members and theirs are each a chunk, so a writer (`atomicWriteChunks`) lets
 * the event loop run between them however many events the run holds.
 */
export function* runFileChunks(run: RunFile): Generator<string> {
  yield* jsonChunks(run, 0, 3);
  yield "\n";
}

/**
 * `JSON.stringify(value, null, 1)` of a value nested `level` deep in the text, as chunks: objects and arrays down
 * to `split` levels are taken member by member, deeper values (and anything with a toJSON) as one chunk each.
 * Iterative in the members, recursive only `split` levels deep.
 */
function* jsonChunks(value: unknown, level: number, split: number): Generator<string> {
  if (split <= 0 || value === null || typeof value !== "object" || typeof (value as { toJSON?: unknown }).toJSON === "function") {
    const text = JSON.stringify(value, null, 1);
    // JSON text holds no raw line break but between its members: each is indented by the level it is nested at.
    yield level === 0 ? text : text.replaceAll("\n", `\n${" ".repeat(level)}`);
    return;
  }
  const inner = " ".repeat(level + 1);
  const omitted = (v: unknown) => v === undefined || typeof v === "function" || typeof v === "symbol";
  if (Array.isArray(value)) {
    if (value.length === 0) {
      yield "[]";
      return;
    }
    yield "[\n";
    for (let i = 0; i < value.length; i++) {
      yield i === 0 ? inner : `,\n${inner}`;
      const element = value[i];
      if (omitted(element)) yield "null";
      else yield* jsonChunks(element, level + 1, split - 1);
    }
    yield `\n${" ".repeat(level)}]`;
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => !omitted(record[k]));
  if (keys.length === 0) {
    yield "{}";
    return;
  }
  yield "{\n";
  for (const [i, key] of keys.entries()) {
    yield `${i === 0 ? "" : ",\n"}${inner}${JSON.stringify(key)}: `;
    yield* jsonChunks(record[key], level + 1, split - 1);
  }
  yield `\n${" ".repeat(level)}}`;
}

/**
 * A run this process made and wrote to `file` itself (`updateRun`), remembered under the sha256 of the bytes it
 * wrote, as a run read and verified is: the next read of those very bytes (the next decision's, under the run's
 * lock) is not parsed, checked and replayed again. Other bytes in the file (the agent's) are read as ever. The run
 * is frozen; its state is the replay of its events (the writer applied each one).
 */
export function rememberWrittenRun(file: string, digest: string, run: RunFile): void {
  remember(path.resolve(file), digest, run, run.state);
}

/** A run file's bytes as read, their sha256 and their JSON shape (no bytes: a file known unchanged, see `fileIdentities`). */
interface HashedRead {
  bytes: Buffer;
  digest: string;
  shape: JsonShape;
}

/**
 * The sha256 of each run file's bytes as last read whole, under the file's identity then: device, inode, size,
 * and modification and change times to the nanosecond. A read that finds the same identity takes that sha256
 * without reading the bytes again, and only then. The change time (ctime) is the one the agent cannot choose:
 * every write, truncate, rename or link onto the file, and every utimes that sets its mtime back, sets it to the
 * kernel's clock now, and no call sets it to anything else. So an identity is kept only when the file's ctime
 * was already IDENTITY_SETTLED_NS older than the read when the read began, and the file's identity was the same
 * after its last byte was read as before its first: any change after that read gives a later ctime than the one
 * kept, even on a file system whose clock ticks coarsely, and a file rewritten with the same size and mtime does
 * not match. (Size and mtime alone, or a sample of the bytes, would match such a rewrite.) The one write no
 * timestamp shows at once, through a shared memory map onto a page already dirty, cannot make a read accept bytes
 * this process did not verify: the answer kept is the verdict on bytes that were read, hashed and verified, and
 * every reader still sets the run against the home's checkpoint.
 */
const fileIdentities = new Map<string, { identity: string; digest: string }>();

/**
 * The budget refusal each run file got part way through its bytes (millions of empty events: refused once the first
 * slices are over the budget, before any sha256 of the whole), under the file's identity then, kept by the rule
 * `fileIdentities` keeps by: the same settled, unchanged identity is the same bytes, and the same refusal.
 */
const budgetRefusals = new Map<string, { identity: string; where: string; error: unknown }>();

/** How settled a run file's last change must be before its identity stands in for reading it (far past any clock tick). */
const IDENTITY_SETTLED_NS = 2_000_000_000n;

/** A file's identity as `fileIdentities` keeps it. */
function identityOf(stat: BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

/** How many run-file reads took a remembered sha256 for an unchanged file instead of reading it (for tests). */
let identityReuses = 0;
export function runFileIdentityReuses(): number {
  return identityReuses;
}

/**
 * The run file's bytes, read in slices (yielding after each), their sha256
 * and their JSON shape (scanned as they come, see `JsonShapeScanner`). A
 * refusal as soon as the bytes read so far are over the run file's budget.
 * `shared`: in memory a worker thread can be handed without a copy.
 */
function* readHashedWithinBudget(
  abs: string,
  where: string,
  shared: boolean,
  answerable: (digest: string) => boolean,
): Generator<undefined, HashedRead> {
  requirePlainPath(abs, "run file");
  // Taken before the file is opened: a ctime settled before this is one no change made during this read can give.
  const began = BigInt(Date.now()) * 1_000_000n;
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
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile())
      throw new UsageError(
        `run file ${abs} is not a regular file (${stat.isFIFO() ? "a FIFO" : stat.isSocket() ? "a socket" : stat.isDirectory() ? "a folder" : "a device"}); give a twinlock run file`,
      );
    requireBytesWithin(BUDGETS.runFile, Number(stat.size), `run file ${abs}`);
    const identity = identityOf(stat);
    const known = fileIdentities.get(abs);
    if (known?.identity === identity && answerable(known.digest)) {
      identityReuses++;
      return { bytes: Buffer.alloc(0), digest: known.digest, shape: { depth: 0, elements: 0 } };
    }
    const overBefore = budgetRefusals.get(abs);
    if (overBefore?.identity === identity && overBefore.where === where) {
      identityReuses++;
      throw copyOfRefusal(overBefore.error);
    }
    const size = Number(stat.size);
    const buffer = shared ? Buffer.from(new SharedArrayBuffer(size)) : Buffer.allocUnsafe(size);
    const hash = createHash("sha256");
    const scanner = new JsonShapeScanner(BUDGETS.runFile);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, Math.min(SLICE_BYTES, size - read), read);
      if (n === 0) break;
      const slice = buffer.subarray(read, read + n);
      hash.update(slice);
      const over = scanner.feed(slice);
      if (over) {
        try {
          requireShapeWithin(BUDGETS.runFile, over, where);
        } catch (error) {
          // The refusal of the bytes read so far: kept under the file's identity as a whole read's sha256 is (below).
          if (stat.ctimeNs < began - IDENTITY_SETTLED_NS && identityOf(fstatSync(fd, { bigint: true })) === identity)
            keep(budgetRefusals, abs, { identity, where, error });
          throw error;
        }
      }
      read += n;
      if (read < size) yield;
    }
    const digest = hash.digest("hex");
    // Kept only for a whole read of a file that did not change while it was read and whose last change was settled.
    if (read === size && stat.ctimeNs < began - IDENTITY_SETTLED_NS && identityOf(fstatSync(fd, { bigint: true })) === identity)
      keep(fileIdentities, abs, { identity, digest });
    else fileIdentities.delete(abs);
    return { bytes: buffer.subarray(0, read), digest, shape: scanner.finish() };
  } finally {
    closeSync(fd);
  }
}

/**
 * A run file's bytes parsed against its schema (not verified): within the
 * run file's budget (scanned before parsing), JSON, no deeper than twinlock
 * reads, of this format, and the schema's first issue named if any.
 */
export function parseRunFileBytes(bytes: Uint8Array, file: string): RunFile {
  requireJsonWithin(BUDGETS.runFile, bytes, `run file ${file}`);
  return parseScannedRunFile(bytes, file);
}

/**
 * `parseRunFileBytes` of bytes already scanned within the run file's budget.
 * Its depth bound (64) is the parser's too (`MAX_JSON_DEPTH`): JSON the scan
 * found no deeper than that needs no second walk over the parsed value.
 */
function parseScannedRunFile(bytes: Uint8Array, file: string): RunFile {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8"));
  } catch (error) {
    throw new UsageError(
      `run file ${file} is not valid JSON (${describeJsonError(error)}); it may be truncated — restore it from backup or create a new run with init-run`,
      { cause: error },
    );
  }
  // The scan's depth bound is within the parser's: only a budget deeper than that would need the walk.
  if (BUDGETS.runFile.depth > MAX_JSON_DEPTH) requireShallowJson(json, `run file ${file}`);
  const format = (json as { format?: unknown } | null)?.format;
  if (typeof format === "string" && format !== RUN_FORMAT && format.startsWith("twinlock-run/"))
    throw new UsageError(
      format === "twinlock-run/1"
        ? `run file ${file} is format ${format}, made by an older twinlock without a gate home; its decisions cannot be trusted now and it is not upgraded — start a new run with \`twinlock init-run\``
        : `run file ${file} is format ${format}, made by another twinlock (this one reads ${RUN_FORMAT}); use that version, or start a new run with \`twinlock init-run\``,
    );
  const parsed = safeParseFirstIssue(RunFileSchema, json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `run file ${file} does not match the run-file schema at ${issue.path.join(".") || "(top level)"}: ${issue.message}; it was edited by hand or by another tool`,
    );
  }
  return parsed.data;
}
