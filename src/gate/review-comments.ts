import { canonicalJson } from "../crypto/canonical-hash.js";
import { UsageError } from "../errors/errors.js";
import type { HandoffModel } from "../handoff/handoff-model.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { clip } from "../input/parse-input.js";

/** The most comments one review carries. */
export const MAX_COMMENTS = 50;
/** The most UTF-8 bytes one comment's text may hold. */
export const MAX_COMMENT_BYTES = 4 * 1024;
/** The longest item a comment may name (a record ID, or a file's path and a line number). */
export const MAX_COMMENT_ITEM = 1200;

/** What a comment may name: a record of the frozen plan, or a line of one of its files. */
export const COMMENT_KINDS = ["evidence", "finding", "action", "criterion", "file"] as const;
export type CommentKind = (typeof COMMENT_KINDS)[number];

/**
 * A reviewer's comment on one item of the frozen revision, as the review
 * receipt carries it (inside the signed body): `item` is a record ID (`A1`)
 * or a file line (`notes.md:12`), `kind` what it names.
 */
export interface ReviewComment {
  item: string;
  kind: CommentKind;
  text: string;
}

/** A comment as a person wrote it, before it is checked against the revision. */
export interface CommentDraft {
  item: string;
  text: string;
}

/** Whether the item a comment named changed in the next revision: changed, unchanged, or gone from it. */
export type CommentItemChange = "changed" | "unchanged" | "removed";

/** A file line as `PATH:LINE`: the path is everything before the last `:`, the line a number from 1. */
const FILE_LINE = /^(.+):([1-9][0-9]{0,8})$/;

/**
 * `ITEM=TEXT` (the CLI's `--comment`) as a draft: the item is everything
 * before the first `=`, so the text may hold any character.
 */
export function parseCommentOption(raw: string): CommentDraft {
  const at = raw.indexOf("=");
  if (at <= 0)
    throw new UsageError(
      `--comment ${JSON.stringify(clip(raw, 40))} is not ITEM=TEXT; name a record (--comment A1="why this target?") or a file line (--comment notes.md:12="…")`,
    );
  return { item: raw.slice(0, at), text: raw.slice(at + 1) };
}

/** The records a comment may name, by ID, with their kind. */
function commentableRecords(model: HandoffModel): Map<string, CommentKind> {
  const out = new Map<string, CommentKind>();
  const add = (kind: CommentKind, records: ReadonlyArray<{ id: string }>) => {
    for (const r of records) if (!out.has(r.id)) out.set(r.id, kind);
  };
  add("evidence", model.evidence);
  add("finding", model.findings);
  add("action", model.actions);
  add("criterion", model.criteria);
  return out;
}

/** How many lines `bytes` hold (a last line without a newline counts; an empty file has none). */
export function countLines(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  let n = 0;
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) n++;
  return bytes[bytes.length - 1] === 10 ? n : n + 1;
}

/**
 * Check drafts against the frozen revision and return them as the receipt
 * carries them, or throw one UsageError naming the first that fails: at most
 * MAX_COMMENTS, each text non-empty and at most MAX_COMMENT_BYTES, each item a
 * record ID of `model` (evidence, finding, action, criterion) or `PATH:LINE`
 * with PATH a file of `files` and LINE within it (`linesOf` counts a file's
 * lines, read only for files commented on). Budgets are checked before any
 * item is looked up.
 */
export function checkReviewComments(
  drafts: readonly CommentDraft[],
  model: HandoffModel,
  files: readonly ManifestEntry[],
  linesOf: (file: ManifestEntry) => number,
): ReviewComment[] {
  if (drafts.length > MAX_COMMENTS)
    throw new UsageError(`${drafts.length} comments is over the limit of ${MAX_COMMENTS} for one review; put the rest in --feedback`);
  for (const d of drafts) {
    if (d.item.length > MAX_COMMENT_ITEM)
      throw new UsageError(
        `a comment names an item of ${d.item.length} characters, over the limit of ${MAX_COMMENT_ITEM}; name a record ID or PATH:LINE`,
      );
    const bytes = Buffer.byteLength(d.text, "utf8");
    if (bytes > MAX_COMMENT_BYTES)
      throw new UsageError(
        `the comment on ${JSON.stringify(clip(d.item, 40))} is ${bytes} bytes, over the limit of ${MAX_COMMENT_BYTES}; shorten it or put the rest in --feedback`,
      );
    if (d.text.trim() === "") throw new UsageError(`the comment on ${JSON.stringify(clip(d.item, 40))} is empty; say what should change`);
  }
  const records = commentableRecords(model);
  const byPath = new Map(files.map((f) => [f.path, f]));
  const lineCounts = new Map<string, number>();
  return drafts.map((d) => {
    const kind = records.get(d.item);
    if (kind !== undefined) return { item: d.item, kind, text: d.text };
    const m = FILE_LINE.exec(d.item);
    const file = m ? byPath.get(m[1] as string) : undefined;
    if (!m || !file)
      throw new UsageError(
        `refused: ${JSON.stringify(clip(d.item, 60))} is not an evidence item, finding, action or criterion of this revision, nor PATH:LINE of one of its files; name an ID the plan shows`,
      );
    const line = Number(m[2]);
    let count = lineCounts.get(file.path);
    if (count === undefined) {
      count = linesOf(file);
      lineCounts.set(file.path, count);
    }
    if (line > count)
      throw new UsageError(
        `refused: ${JSON.stringify(clip(d.item, 60))} names line ${line}, but ${clip(file.path, 60)} has ${count} line${count === 1 ? "" : "s"}; name a line within the file`,
      );
    return { item: d.item, kind: "file", text: d.text };
  });
}

/** A record's content by kind and ID, for comparing two revisions. */
function recordContent(model: HandoffModel, kind: CommentKind, id: string): string | undefined {
  const list =
    kind === "evidence"
      ? model.evidence
      : kind === "finding"
        ? model.findings
        : kind === "action"
          ? model.actions
          : kind === "criterion"
            ? model.criteria
            : [];
  const r = (list as ReadonlyArray<{ id: string; source: unknown }>).find((x) => x.id === id);
  return r === undefined ? undefined : canonicalJson(r.source);
}

/**
 * For each comment of a request for changes, whether the item it names
 * changed from the revision commented on (`before`) to the next (`after`):
 * a record by its content as the format wrote it, a file line by the file's
 * bytes (its sha256). Pure; the records are compared by ID and kind.
 */
export function commentItemChanges(
  comments: readonly ReviewComment[],
  before: { model: HandoffModel | undefined; files: readonly ManifestEntry[] },
  after: { model: HandoffModel; files: readonly ManifestEntry[] },
): CommentItemChange[] {
  const beforeFiles = new Map(before.files.map((f) => [f.path, f.sha256]));
  const afterFiles = new Map(after.files.map((f) => [f.path, f.sha256]));
  return comments.map((c) => {
    if (c.kind === "file") {
      const path = FILE_LINE.exec(c.item)?.[1] ?? c.item;
      const now = afterFiles.get(path);
      return now === undefined ? "removed" : now === beforeFiles.get(path) ? "unchanged" : "changed";
    }
    const now = recordContent(after.model, c.kind, c.item);
    if (now === undefined) return "removed";
    const was = before.model ? recordContent(before.model, c.kind, c.item) : undefined;
    return was === now ? "unchanged" : "changed";
  });
}
