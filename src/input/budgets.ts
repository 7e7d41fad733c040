import { UsageError } from "../errors/errors.js";

/** What one kind of agent-written input may be at most in bytes, checked before it is read; a refusal names the budget and the limit. */
export interface ByteBudget {
  /** What the input is, for the refusal ("run file", "handoff record"). */
  what: string;
  bytes: number;
}

/**
 * What one kind of agent-written input may be at most, checked before it is
 * parsed: its size in bytes, how deep its arrays and objects nest, and how
 * many elements (array items, or object members) any one of them holds.
 * A refusal names the budget, the limit and what was found.
 */
export interface InputBudget extends ByteBudget {
  depth: number;
  /** Most elements in any one array, or members in any one object. */
  elements: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * Every budget, by the input it bounds (docs/reference.md "Limits" lists them).
 * Sized from what real runs hold, with room: a run of a few pairs with a dozen
 * revisions is well under 1 MiB; the bench's 20,000-file handoff freezes a
 * manifest of about 3.3 MiB per revision into the run file; record files of 10,000 actions are
 * a few MiB; a 10,000-prompt suite's twinlock.yaml is a few KiB.
 */
export const BUDGETS = {
  /**
   * The run file. 16 MiB: the first read of new bytes parses, checks and
   * replays them, which costs time in proportion (measured on a loaded 2-core
   * machine: 12 MiB, a run of three revisions of a 20,000-file handoff, took
   * 2.2 s to scan, parse and check against the schema and 5 s more to verify
   * the chain and replay it; 31 MiB took 4.3 s and 20 s); every later read of
   * the same bytes (verified or refused) costs reading, one sha256 (40 ms for
   * 16 MiB there) and the scan, in slices (src/store/run-file.ts). A run of a
   * few pairs with a dozen revisions of a 1,000-file handoff is about 2 MiB.
   */
  runFile: { what: "run file", bytes: 16 * MiB, depth: 64, elements: 100_000 },
  /**
   * One handoff record file (JSON), in any handoff format. 16 MiB and
   * 100,000 elements is room, not a target: a plan a person can review is far
   * smaller (the demo's records are a few KiB, 10,000 actions about 3 MiB).
   * What it costs is bounded apart from what it is shown as: a freeze checks
   * it in time proportional to its size (measured on a loaded 2-core machine:
   * 16 MiB of 58,000 evidence records, 3.5–5 s to freeze), a server reads a
   * frozen revision's records once and keeps them cut to RECORD_SHOW_BUDGET
   * (2–3 s the first time, then tens of ms and a few hundred KB per answer),
   * and every presentation shows at most that budget. It is not lowered
   * because frozen bytes are read back under this same budget: a revision
   * frozen under a larger one would no longer read for `present` or admission.
   */
  handoffRecord: { what: "handoff record", bytes: 16 * MiB, depth: 64, elements: 100_000 },
  /** A handoff format's JSON Schema file in the suite. */
  formatSchema: { what: "handoff format schema", bytes: 1 * MiB, depth: 64, elements: 10_000 },
  /** The suite's `twinlock.yaml`. */
  suiteConfig: { what: "twinlock.yaml", bytes: 1 * MiB, depth: 64, elements: 10_000 },
  /** What an agent tool hands the hook on stdin (a Write of a large file carries its content). */
  hookInput: { what: "hook input", bytes: 16 * MiB, depth: 64, elements: 100_000 },
  /**
   * One changed file `verify` and `close` hash (a blob of `--git-range`, or a
   * file of `--changed-files`), its size asked for before a byte is read and
   * its bytes hashed as they stream. 128 MiB: above GitHub's 100 MiB limit
   * for a file in a repository, so any file a pull request can hold passes;
   * a larger one (an agent's 2 GiB blob) is refused naming it, not read.
   */
  changedFile: { what: "changed file", bytes: 128 * MiB },
  /**
   * All the changed files of one change together: their bytes (each blob
   * counted once, however many paths hold it) and how many paths. 1 GiB is
   * about 5 s of hashing on a busy two-core machine.
   */
  changedFiles: { what: "change", bytes: 1 * GiB, files: 100_000 },
  /**
   * One path a tool call names for a write, or as the folder a command runs
   * in, judged before a file is looked at (the hook and every in-process
   * adapter). 4,096 bytes is Linux's PATH_MAX, so no file system takes a
   * longer one; 1,024 parts (the text between slashes, empty ones too) is
   * far deeper than any real tree, and bounds the walk to one lstat each.
   */
  path: { what: "path", bytes: 4096, parts: 1024 },
} as const satisfies Record<string, InputBudget | (ByteBudget & { files?: number; parts?: number })>;

/** The most events a run file holds (each one a step a person or the gate made). */
export const MAX_RUN_EVENTS = BUDGETS.runFile.elements;

/** How far one budget was overrun: which limit, the limit, and what was found (for a refusal's details). */
export interface BudgetOverrun {
  budget: string;
  limit: "bytes" | "depth" | "elements";
  max: number;
  found: number;
}

/** Thrown for input over its budget: a UsageError (exit 2) carrying the overrun as data. */
export class BudgetError extends UsageError {
  constructor(
    message: string,
    readonly overrun: BudgetOverrun,
  ) {
    super(message);
  }
}

/** Refuse `size` bytes of `where` over the budget's byte limit, naming both and what to do (`todo`). */
export function requireBytesWithin(budget: ByteBudget, size: number, where: string, todo = "it is not one twinlock reads"): void {
  if (size > budget.bytes)
    throw new BudgetError(
      `${where} is ${size.toLocaleString("en-US")} bytes, over the ${budget.bytes.toLocaleString("en-US")}-byte limit for a ${budget.what}; ${todo}`,
      { budget: budget.what, limit: "bytes", max: budget.bytes, found: size },
    );
}

/** What a scan of JSON text found: its deepest nesting and its largest array or object. */
export interface JsonShape {
  depth: number;
  elements: number;
}

/**
 * Refuse JSON text over the budget before it is parsed: bytes first, then
 * one linear scan of the text (see `scanJsonShape`) for nesting and for the
 * elements of its largest array or object. Throws a BudgetError naming the
 * limit and what was found; text that is not JSON passes on to the parser,
 * which says why.
 */
export function requireJsonWithin(budget: InputBudget, text: string | Uint8Array, where: string): JsonShape {
  requireBytesWithin(budget, typeof text === "string" ? Buffer.byteLength(text) : text.length, where);
  return requireShapeWithin(budget, scanJsonShape(text, budget), where);
}

/** Refuse a scanned shape (see `scanJsonShape`, `JsonShapeScanner`) over the budget's depth or elements, naming the limit. */
export function requireShapeWithin(budget: InputBudget, shape: JsonShape, where: string): JsonShape {
  if (shape.depth > budget.depth)
    throw new BudgetError(
      `${where} nests arrays and objects more than ${budget.depth} levels deep, over the limit for a ${budget.what}; it is not one twinlock reads`,
      { budget: budget.what, limit: "depth", max: budget.depth, found: shape.depth },
    );
  if (shape.elements > budget.elements)
    throw new BudgetError(
      `${where} holds an array or object of more than ${budget.elements.toLocaleString("en-US")} elements, over the limit for a ${budget.what}; it is not one twinlock reads`,
      { budget: budget.what, limit: "elements", max: budget.elements, found: shape.elements },
    );
  return shape;
}

/**
 * Refuse YAML text over the budget before it is parsed: bytes; then its
 * entries — the lines that are neither blank nor a comment, each at most one
 * element of a block mapping or list — and its flow collections (`[…]`,
 * `{…}`) scanned as JSON's are. A quoted string holding brackets or commas
 * counts a little high, never low.
 */
export function requireYamlWithin(budget: InputBudget, text: string, where: string): void {
  requireBytesWithin(budget, Buffer.byteLength(text), where);
  let entries = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    let i = start;
    while (i < end && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x09 || text.charCodeAt(i) === 0x0d)) i++;
    if (i < end && text.charCodeAt(i) !== 0x23) entries++;
    start = end + 1;
  }
  const shape = scanJsonShape(text, budget);
  const elements = Math.max(entries, shape.elements);
  if (shape.depth > budget.depth)
    throw new BudgetError(
      `${where} nests flow collections more than ${budget.depth} levels deep, over the limit for a ${budget.what}; write it plainly`,
      { budget: budget.what, limit: "depth", max: budget.depth, found: shape.depth },
    );
  if (elements > budget.elements)
    throw new BudgetError(
      `${where} holds more than ${budget.elements.toLocaleString("en-US")} entries, over the limit for a ${budget.what}; it is not one twinlock reads`,
      { budget: budget.what, limit: "elements", max: budget.elements, found: elements },
    );
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * The nesting depth of JSON text and the elements of its largest array or
 * object, in one pass over the characters (or bytes) without building
 * anything: brackets outside strings open and close a level, a comma at a
 * level counts one more element there. It stops as soon as either is past
 * `stopAt` (the result is then just over it), so its cost is linear and its
 * memory fixed. It does not check that the text is JSON.
 */
export function scanJsonShape(text: string | Uint8Array, stopAt: { depth: number; elements: number } = BUDGETS.hookInput): JsonShape {
  const scanner = new JsonShapeScanner(stopAt);
  return scanner.feed(typeof text === "string" ? Buffer.from(text, "utf8") : text) ?? scanner.finish();
}

/**
 * `scanJsonShape` in pieces: feed the bytes as they are read, in any slices
 * (a string's escape may end one slice and its character begin the next), and
 * stop reading as soon as `feed` returns a shape, which is then past `stopAt`.
 * So a reader refuses a file whose first bytes are already over its budget
 * without reading the rest, and can let other work run between slices.
 */
export class JsonShapeScanner {
  // Elements counted at each open level; a level with no element yet holds 0 until its first value.
  private readonly counts: Int32Array;
  private readonly seen: Uint8Array;
  private depth = 0;
  private maxDepth = 0;
  private maxElements = 0;
  private inString = false;
  /** The last slice ended on a backslash inside a string: the next slice's first byte is escaped. */
  private escapePending = false;
  private over: JsonShape | undefined;

  constructor(private readonly stopAt: { depth: number; elements: number }) {
    this.counts = new Int32Array(stopAt.depth + 2);
    this.seen = new Uint8Array(stopAt.depth + 2);
  }

  /** Scan the next slice; the shape once it is past `stopAt` (every later call returns it too), else undefined. */
  feed(bytes: Uint8Array): JsonShape | undefined {
    if (this.over) return this.over;
    const { counts, seen, stopAt } = this;
    let { depth, maxDepth, maxElements, inString } = this;
    const n = bytes.length;
    let i = 0;
    if (this.escapePending && n > 0) {
      this.escapePending = false;
      i = 1;
    }
    for (; i < n; i++) {
      const c = bytes[i] as number;
      if (inString) {
        if (c === BACKSLASH) {
          if (i + 1 === n) this.escapePending = true;
          i++;
        } else if (c === QUOTE) inString = false;
        continue;
      }
      if (c === QUOTE) {
        inString = true;
        if (depth > 0) seen[depth] = 1;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (depth > 0) seen[depth] = 1;
        depth++;
        if (depth > maxDepth) maxDepth = depth;
        if (depth > stopAt.depth) {
          this.over = { depth, elements: maxElements };
          return this.over;
        }
        counts[depth] = 0;
        seen[depth] = 0;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (depth > 0) {
          const elements = (counts[depth] as number) + (seen[depth] as number);
          if (elements > maxElements) maxElements = elements;
          depth--;
        }
      } else if (c === COMMA) {
        if (depth > 0) {
          const commas = (counts[depth] as number) + 1;
          counts[depth] = commas;
          if (commas + 1 > stopAt.elements) {
            this.over = { depth: maxDepth, elements: commas + 1 };
            return this.over;
          }
        }
      } else if (depth > 0 && c > 0x20) seen[depth] = 1;
    }
    this.depth = depth;
    this.maxDepth = maxDepth;
    this.maxElements = maxElements;
    this.inString = inString;
    return undefined;
  }

  /** The shape of everything fed: levels never closed (truncated text) count as they stand. */
  finish(): JsonShape {
    if (this.over) return this.over;
    let maxElements = this.maxElements;
    for (let d = this.depth; d > 0; d--) maxElements = Math.max(maxElements, (this.counts[d] as number) + (this.seen[d] as number));
    return { depth: this.maxDepth, elements: maxElements };
  }
}
