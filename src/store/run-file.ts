import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import path from "node:path";
import type { ZodMiniType } from "zod/mini";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { IntegrityError, UsageError } from "../errors/errors.js";
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
 * Parsing and verifying bytes not seen before is still one piece of work.
 */
export async function readRunFileAsync(file: string): Promise<LoadedRun> {
  // At most MAX_READS_IN_FLIGHT files' bytes held at once, however many requests ask (each may be 16 MiB).
  await takeReadSlot();
  try {
    const steps = loadRunFile(file, true);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value as LoadedRun;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } finally {
    giveBackReadSlot();
  }
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
  const where = `run file ${file}`;
  const read = yield* readHashedWithinBudget(abs, where);
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
    const hint = verdict.check === "state" ? ` — run \`twinlock verify-log ${file}\`` : "";
    const error = new IntegrityError(`run file ${file}: ${verdict.reason}${hint}`, { seq: verdict.seq });
    rememberRefusal(abs, { digest, file, stage: "verify", error });
    throw error;
  }
  remember(abs, digest, run, verdict.state);
  return { path: abs, file: run, state: run.state };
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
  const events = run ? [...run.events] : [];
  // One copy of the caller's state, then each event changes it in place: the caller keeps its run as it was.
  let state: RunState | undefined = run ? structuredClone(run.state) : undefined;
  let prev = run ? run.head : GENESIS;
  const at = now.toISOString();
  for (const d of drafts) {
    let event: RunEvent = { seq: events.length + 1, at, actor: d.actor, type: d.type, data: d.data, prev };
    state = applyEventOwned(state, event);
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

/**
 * The run file's bytes, read in slices (yielding after each), their sha256
 * and their JSON shape (scanned as they come, see `JsonShapeScanner`). A
 * refusal as soon as the bytes read so far are over the run file's budget.
 */
function* readHashedWithinBudget(abs: string, where: string): Generator<undefined, { bytes: Buffer; digest: string; shape: JsonShape }> {
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
    requireBytesWithin(BUDGETS.runFile, stat.size, `run file ${abs}`);
    const buffer = Buffer.allocUnsafe(stat.size);
    const hash = createHash("sha256");
    const scanner = new JsonShapeScanner(BUDGETS.runFile);
    let read = 0;
    while (read < stat.size) {
      const n = readSync(fd, buffer, read, Math.min(SLICE_BYTES, stat.size - read), read);
      if (n === 0) break;
      const slice = buffer.subarray(read, read + n);
      hash.update(slice);
      const over = scanner.feed(slice);
      if (over) requireShapeWithin(BUDGETS.runFile, over, where);
      read += n;
      if (read < stat.size) yield;
    }
    return { bytes: buffer.subarray(0, read), digest: hash.digest("hex"), shape: scanner.finish() };
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
