import { type BoundedDiff, DIFF_BUDGET, diffWithinBudget, type RevisionDigest } from "../handoff/diff-within-budget.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { readBlob } from "../home/frozen-bytes.js";
import type { GateHome } from "../home/gate-home.js";
import { readBlobHead } from "../home/read-blob-head.js";

/**
 * How much of a revision's files `present`, the revision page and the MCP
 * plan resource show. A file up to `fileBytes` is shown whole (read and
 * checked against its sha256); a larger one by its first `headBytes` (one
 * bounded read); and once the bytes read for one presentation (every file
 * shown, and every previous revision read to diff against) reach
 * `totalBytes`, the files after it by their path, size and sha256 only.
 * The records are shown apart from this, within RECORD_SHOW_BUDGET (present-records.ts).
 */
export const SHOW_BUDGET = {
  fileBytes: 1024 * 1024,
  headBytes: 64 * 1024,
  totalBytes: 2 * 1024 * 1024,
} as const;

export type ShowBudget = { [K in keyof typeof SHOW_BUDGET]: number };

/** Why a changed file has no diff: a limit of the diff itself, or `total`: the presentation's read budget was spent. */
export interface DiffNotShown {
  reason: Extract<BoundedDiff, { kind: "too_large" }>["reason"] | "total" | "not_whole";
  /** The limit passed, in its unit (bytes, lines, edits, milliseconds). */
  limit: number;
  found: number | null;
  /** The previous revision's size and sha256, or null for a new file. */
  before: RevisionDigest | null;
  after: RevisionDigest;
}

/** One hashed file of a frozen revision: what is shown of it, and its diff against the previous revision. */
export interface PresentedFile {
  path: string;
  size: number;
  sha256: string;
  change: "added" | "changed" | "unchanged";
  /** All of it, its first `shownBytes` (it is over the per-file budget), or nothing (the total budget was spent). */
  shown: "whole" | "head" | "none";
  /** How many of its bytes are shown (`size` when whole). */
  shownBytes: number;
  /** The text shown (all of it, or the head), or null for a file that is not text or of which nothing is shown. */
  text: string | null;
  /** Unified diff against the previous revision, or null when unchanged, not text, there is none, or not diffed (see `diffNotShown`). */
  diff: string | null;
  /** For a changed file that was not diffed: why, and each revision's size and sha256. */
  diffNotShown?: DiffNotShown;
  /** For a file that is not text: what the reviewer is shown of it (see lossyText). */
  lossy?: string;
  /** For a file not shown whole: which budget cut it (`file`: over the per-file limit; `total`: the presentation's was spent) and that limit in bytes. */
  cut?: { by: "file" | "total"; limit: number };
  /** For a file not shown whole: where the gate home keeps all of its bytes, relative to the home. */
  frozenAt?: string;
}

/**
 * Each frozen file as the reviewer is shown it, within `budget` (see
 * SHOW_BUDGET), with a line diff (diffWithinBudget) when it changed and
 * both revisions are text read whole. One file at a time, a turn of the
 * event loop between files, so a server keeps answering meanwhile.
 */
export async function presentFiles(
  home: GateHome,
  files: readonly ManifestEntry[],
  previous: readonly ManifestEntry[] | undefined,
  budget: ShowBudget = SHOW_BUDGET,
): Promise<PresentedFile[]> {
  const before = new Map((previous ?? []).map((f) => [f.path, f]));
  let left = budget.totalBytes;
  const out: PresentedFile[] = [];
  for (const f of files) {
    // Let other requests in between files that are read: each file's work is bounded, the number of files is not.
    if (out.length > 0 && out[out.length - 1]?.shown !== "none") await new Promise((resolve) => setImmediate(resolve));
    const old = before.get(f.path);
    const change = previous === undefined ? "unchanged" : !old ? "added" : old.sha256 !== f.sha256 ? "changed" : "unchanged";
    const facts = { path: f.path, size: f.size, sha256: f.sha256, change } as const;
    // A file no larger than its head would be is shown whole (and checked): a "part" is never all of it.
    const whole = f.size <= Math.max(budget.fileBytes, budget.headBytes) && f.size <= left;
    const headBytes = whole ? f.size : Math.min(budget.headBytes, left, f.size);
    const cut = {
      by: f.size > budget.fileBytes ? "file" : "total",
      limit: f.size > budget.fileBytes ? budget.fileBytes : budget.totalBytes,
    } as const;
    if (!whole && headBytes <= 0) {
      out.push({ ...facts, shown: "none", shownBytes: 0, text: null, diff: null, cut, frozenAt: frozenAt(f) });
      continue;
    }
    const bytes = whole ? readBlob(home, f) : readBlobHead(home, f, headBytes);
    left -= bytes.length;
    const text = asText(whole ? bytes : wholeCharacters(bytes));
    const shown = whole ? "whole" : "head";
    const part = { ...facts, shown, shownBytes: bytes.length, text, ...(whole ? {} : { cut, frozenAt: frozenAt(f) }) } as const;
    if (text === null) {
      out.push({ ...part, diff: null, lossy: lossyText(bytes) });
      continue;
    }
    let diff: string | null = null;
    let diffNotShown: DiffNotShown | undefined;
    if (change !== "unchanged") {
      const after = { size: f.size, sha256: f.sha256 };
      const was = old ? { size: old.size, sha256: old.sha256 } : null;
      if (!whole) diffNotShown = { reason: "not_whole", limit: budget.fileBytes, found: f.size, before: was, after };
      else if (Math.max(old?.size ?? 0, f.size) > DIFF_BUDGET.maxBytes)
        // Neither revision is read for a diff it could not have.
        diffNotShown = { reason: "bytes", limit: DIFF_BUDGET.maxBytes, found: Math.max(old?.size ?? 0, f.size), before: was, after };
      else if (old && old.size > left) diffNotShown = { reason: "total", limit: budget.totalBytes, found: null, before: was, after };
      else {
        const oldBytes = old ? readBlob(home, old) : undefined;
        if (oldBytes) left -= oldBytes.length;
        const oldText = oldBytes ? asText(oldBytes) : "";
        // A file that was not text before has no line diff: its text is shown whole below.
        if (oldText !== null) {
          const d = await diffWithinBudget(old ? { name: `a/${f.path}`, text: oldText } : null, { name: `b/${f.path}`, text });
          if (d.kind === "diff") diff = d.patch;
          // The digests are the manifest's: the same bytes, already checked by readBlob.
          else diffNotShown = { reason: d.reason, limit: d.limit, found: d.found, before: was, after };
        }
      }
    }
    out.push({ ...part, diff, ...(diffNotShown ? { diffNotShown } : {}) });
  }
  return out;
}

/** Where the home keeps a frozen file's bytes, relative to the home (as `blobPath` lays it out). */
function frozenAt(f: ManifestEntry): string {
  return `blobs/${f.sha256.slice(0, 2)}/${f.sha256}`;
}

/**
 * A file that is not UTF-8 text, as a reviewer can still read it: decoded with
 * each invalid byte as U+FFFD (NULs and controls become � when shown), all of
 * what is shown of it.
 */
function lossyText(bytes: Buffer): string {
  return bytes.toString("utf8");
}

/** UTF-8 text without NUL bytes, or null for a binary file. */
function asText(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? text : null;
}

/** The head of a file without a UTF-8 character cut in two at its end (its last 1–3 bytes may begin one). */
function wholeCharacters(bytes: Buffer): Buffer {
  let start = bytes.length - 1;
  // Back over continuation bytes (10xxxxxx) to the byte that begins the last character.
  while (start >= 0 && start > bytes.length - 4 && ((bytes[start] as number) & 0xc0) === 0x80) start--;
  if (start < 0) return bytes;
  const lead = bytes[start] as number;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start + length > bytes.length ? bytes.subarray(0, start) : bytes;
}

/**
 * What a reviewer must be told of a file not shown whole, in one plain
 * sentence (each front end marks it up): how much is shown and why, and
 * where all of it is. Null for a file shown whole.
 */
export function describeNotWhole(f: PresentedFile): string | null {
  if (f.shown === "whole") return null;
  const why =
    f.cut?.by === "file"
      ? `it is over the ${f.cut.limit}-byte limit for a file shown whole`
      : `the ${f.cut?.limit ?? SHOW_BUDGET.totalBytes} bytes one presentation shows were spent on the files before it`;
  const part =
    f.shown === "head"
      ? `Not the whole file: only its first ${f.shownBytes} of ${f.size} bytes are shown, because ${why} (this part is read from the gate's frozen copy; the sha256 covers all of it and is checked at admission and checkout).`
      : `Not shown: none of its ${f.size} bytes are shown, because ${why}.`;
  return `${part} All of it is in the gate home at ${f.frozenAt ?? frozenAt(f)} (sha256 ${f.sha256}); after admission, twinlock checkout writes a read-only copy of every byte.`;
}

/** Why a changed file has no diff, in one plain sentence with each revision's size and sha256; null when it has one or needs none. */
export function describeDiffNotShown(f: PresentedFile, revision: number, previous = revision - 1): string | null {
  const d = f.diffNotShown;
  if (!d) return null;
  const why = {
    bytes: `a revision is ${d.found ?? "over"} bytes, over the ${d.limit}-byte diff limit`,
    lines: `a revision has ${d.found ?? "more"} lines, over the ${d.limit}-line diff limit`,
    edits:
      d.found === null
        ? `more than ${d.limit} lines would be added or removed`
        : `at least ${d.found} lines would be added or removed, over the limit of ${d.limit}`,
    time: `the diff took longer than ${d.limit} ms`,
    total: `the ${d.limit} bytes one presentation reads were spent before it`,
    not_whole: "the file is not shown whole",
  }[d.reason];
  const was =
    d.before === null ? `it is new in revision ${revision}` : `revision ${previous} is ${d.before.size} bytes, sha256 ${d.before.sha256}`;
  return `Too large to diff: ${why}. ${was[0]?.toUpperCase()}${was.slice(1)}; revision ${revision} is ${d.after.size} bytes, sha256 ${d.after.sha256}.`;
}
