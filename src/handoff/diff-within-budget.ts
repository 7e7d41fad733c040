import { createHash } from "node:crypto";
import { diffArrays, FILE_HEADERS_ONLY, formatPatch, type StructuredPatchHunk } from "diff";

/**
 * What one line diff may cost. Myers' algorithm (the `diff` package's) takes
 * time about (lines × edits) and memory about edits²: a side over `maxBytes`
 * or `maxLines` is not diffed at all, a pair that needs more than `maxEdits`
 * lines added plus removed is given up (`maxEditLength`), and `timeoutMs` is
 * a backstop the package checks between steps. Each step runs in its own
 * turn of the event loop, so a server keeps answering while a diff runs.
 */
export const DIFF_BUDGET = {
  maxBytes: 256 * 1024,
  maxLines: 20_000,
  maxEdits: 500,
  timeoutMs: 10_000,
  context: 3,
} as const;

export type DiffBudget = { [K in keyof typeof DIFF_BUDGET]: number };

/** One side of a diff: the name its header shows (and an optional tab-separated header), and its text. */
export interface DiffSide {
  name: string;
  header?: string;
  text: string;
}

/** What a reviewer is shown of a revision that was not diffed: its size in bytes and sha256 (hex). */
export interface RevisionDigest {
  size: number;
  sha256: string;
}

/** Why a pair was not diffed: a side over the byte or line limit, more edits than the limit, or the backstop time ran out. */
export type TooLargeReason = "bytes" | "lines" | "edits" | "time";

/** Either the unified diff (from its `--- ` header on), or "too large to diff" with each revision's digest and the limit passed. */
export type BoundedDiff =
  | { kind: "diff"; patch: string }
  | {
      kind: "too_large";
      reason: TooLargeReason;
      /** The limit passed (bytes, lines, edits or milliseconds). */
      limit: number;
      /** What was found, when it is known (a side's bytes or lines, or at least this many edits); null when only "more than the limit" is. */
      found: number | null;
      /** The old revision's digest, or null for a file that is new. */
      before: RevisionDigest | null;
      after: RevisionDigest;
    };

/**
 * Diff two texts by line within `budget`, the one way every diff twinlock
 * shows is made: the answer is a unified diff that turns `before` (null: a
 * new file, shown as /dev/null) into `after`, or "too large to diff" naming
 * the limit and each revision's size and sha256 — never a partial diff.
 * Cost: linear in the texts, plus a Myers search bounded by `maxEdits`,
 * run a step per event-loop turn. Lines split at `\n` only: a `\r` is part of
 * its line and stays in the patch, so the patch is byte-exact; a tool that
 * guesses line endings (the `diff` package's applyPatch unless given
 * `autoConvertLineEndings: false`) may drop a `\r` that ends every line shown.
 */
export async function diffWithinBudget(before: DiffSide | null, after: DiffSide, budget: DiffBudget = DIFF_BUDGET): Promise<BoundedDiff> {
  const tooLarge = (reason: TooLargeReason, limit: number, found: number | null): BoundedDiff => ({
    kind: "too_large",
    reason,
    limit,
    found,
    before: before === null ? null : digestOf(before.text),
    after: digestOf(after.text),
  });
  const oldText = before?.text ?? "";
  for (const text of [oldText, after.text]) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > budget.maxBytes) return tooLarge("bytes", budget.maxBytes, bytes);
  }
  const ids = new Map<string, number>();
  const oldLines = splitLines(oldText);
  const newLines = splitLines(after.text);
  for (const lines of [oldLines, newLines]) if (lines.length > budget.maxLines) return tooLarge("lines", budget.maxLines, lines.length);
  // Each distinct line becomes a small integer, so the search compares numbers, never long strings.
  const a = oldLines.map((l) => idOf(ids, l));
  const b = newLines.map((l) => idOf(ids, l));
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const oldMid = a.slice(head, a.length - tail);
  const newMid = b.slice(head, b.length - tail);
  // Every line one side has more often than the other must be added or removed: a lower bound on the edits, found in
  // linear time, so a pair of unlike texts is answered at once rather than after the whole bounded search.
  const atLeast = editsAtLeast(oldMid, newMid, ids.size);
  if (atLeast > budget.maxEdits) return tooLarge("edits", budget.maxEdits, atLeast);
  let middle: Array<{ count: number; added: boolean; removed: boolean }>;
  if (oldMid.length === 0 || newMid.length === 0) {
    middle = [
      { count: oldMid.length, added: false, removed: true },
      { count: newMid.length, added: true, removed: false },
    ].filter((c) => c.count > 0);
  } else {
    const started = Date.now();
    const found = await new Promise<Array<{ count: number; added: boolean; removed: boolean }> | undefined>((resolve) =>
      diffArrays(oldMid, newMid, { maxEditLength: budget.maxEdits, timeout: budget.timeoutMs, callback: resolve }),
    );
    if (found === undefined)
      return Date.now() - started >= budget.timeoutMs ? tooLarge("time", budget.timeoutMs, null) : tooLarge("edits", budget.maxEdits, null);
    middle = found;
  }
  const changes = [
    { count: head, added: false, removed: false },
    ...middle.map((c) => ({ count: c.count, added: c.added, removed: c.removed })),
    { count: tail, added: false, removed: false },
  ];
  const hunks = unifiedHunks(changes, oldLines, newLines, budget.context);
  const patch = formatPatch(
    {
      oldFileName: before?.name ?? "/dev/null",
      newFileName: after.name,
      oldHeader: before?.header,
      newHeader: after.header,
      hunks,
    },
    FILE_HEADERS_ONLY,
  );
  return { kind: "diff", patch };
}

/** The size and sha256 of a text's UTF-8 bytes. */
export function digestOf(text: string): RevisionDigest {
  const bytes = Buffer.from(text, "utf8");
  return { size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** Lines as the `diff` package reads them: each with its `\n`, the last without one when the text does not end in one. */
function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf("\n", start);
    if (end === -1) {
      out.push(text.slice(start));
      break;
    }
    out.push(text.slice(start, end + 1));
    start = end + 1;
  }
  return out;
}

/** The line's number, from 1 (the `diff` package drops falsy tokens of strings; numbers from 1 are never dropped). */
function idOf(ids: Map<string, number>, line: string): number {
  let id = ids.get(line);
  if (id === undefined) {
    id = ids.size + 1;
    ids.set(line, id);
  }
  return id;
}

/** The number of lines one side holds more often than the other, summed: no diff of the two has fewer edits. */
function editsAtLeast(a: readonly number[], b: readonly number[], distinct: number): number {
  const balance = new Int32Array(distinct + 1);
  for (const id of a) balance[id] = (balance[id] ?? 0) + 1;
  for (const id of b) balance[id] = (balance[id] ?? 0) - 1;
  let sum = 0;
  for (const v of balance) sum += Math.abs(v);
  return sum;
}

/**
 * Unified-diff hunks from a sequence of runs (kept, removed, added lines),
 * with `context` lines around each change and changes closer than twice
 * that joined into one hunk, as GNU diff and the `diff` package make them.
 */
function unifiedHunks(
  changes: ReadonlyArray<{ count: number; added: boolean; removed: boolean }>,
  oldLines: readonly string[],
  newLines: readonly string[],
  context: number,
): StructuredPatchHunk[] {
  // One entry per line shown: its sign and text, and how many old and new lines come before it.
  const entries: Array<{ sign: " " | "-" | "+"; line: string; oldBefore: number; newBefore: number }> = [];
  let o = 0;
  let n = 0;
  for (const c of changes) {
    for (let i = 0; i < c.count; i++) {
      if (c.removed) {
        entries.push({ sign: "-", line: oldLines[o] as string, oldBefore: o, newBefore: n });
        o++;
      } else if (c.added) {
        entries.push({ sign: "+", line: newLines[n] as string, oldBefore: o, newBefore: n });
        n++;
      } else {
        entries.push({ sign: " ", line: newLines[n] as string, oldBefore: o, newBefore: n });
        o++;
        n++;
      }
    }
  }
  const hunks: StructuredPatchHunk[] = [];
  let i = 0;
  while (i < entries.length) {
    if ((entries[i] as (typeof entries)[number]).sign === " ") {
      i++;
      continue;
    }
    const start = Math.max(0, i - context);
    let lastChange = i;
    let j = i;
    for (; j < entries.length; j++) {
      if ((entries[j] as (typeof entries)[number]).sign !== " ") lastChange = j;
      else if (j - lastChange > 2 * context) break;
    }
    const end = Math.min(entries.length, lastChange + context + 1);
    const shown = entries.slice(start, end);
    const first = shown[0] as (typeof entries)[number];
    const lines: string[] = [];
    for (const e of shown) {
      const ends = e.line.endsWith("\n");
      lines.push(`${e.sign}${ends ? e.line.slice(0, -1) : e.line}`);
      if (!ends) lines.push("\\ No newline at end of file");
    }
    hunks.push({
      oldStart: first.oldBefore + 1,
      oldLines: shown.filter((e) => e.sign !== "+").length,
      newStart: first.newBefore + 1,
      newLines: shown.filter((e) => e.sign !== "-").length,
      lines,
    });
    i = end;
  }
  return hunks;
}
