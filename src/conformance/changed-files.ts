import { execFileSync, spawn } from "node:child_process";
import { createHash, type Hash } from "node:crypto";
import { closeSync, constants as fsConstants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync, readSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import { BUDGETS, BudgetError, type ByteBudget, requireBytesWithin } from "../input/budgets.js";
import type { ChangedFile, ChangedFileMode } from "./check-conformance.js";

/**
 * What one command hashes of a change at most: each changed file's bytes,
 * and all of them together with how many paths (BUDGETS.changedFile and
 * BUDGETS.changedFiles; a test passes smaller ones).
 */
export interface ChangeBudget {
  file: ByteBudget;
  total: ByteBudget & { files: number };
}

const CHANGE_BUDGET: ChangeBudget = { file: BUDGETS.changedFile, total: BUDGETS.changedFiles };

/** One side of a git range: a commit name git cannot read as an option, with no `..` inside. */
const RANGE_SIDE = /^[A-Za-z0-9_./^~@{}-]+$/;

/**
 * A git range, split: `A..B` (the files that differ between commits A and B)
 * or `A...B` (the files B changed since it left A: from their merge base, so
 * commits A gained later are not counted as B's). Refuses anything git could
 * read as an option or a second argument. Linear: one `indexOf`, no
 * backtracking pattern over the whole text.
 */
export function parseGitRange(range: string): { from: string; to: string; sinceMergeBase: boolean } {
  const refuse = () =>
    new UsageError(`--git-range ${JSON.stringify(range)} is not a range A...B (or A..B) of two commits, e.g. origin/main...HEAD`);
  const at = range.indexOf("..");
  if (at < 0) throw refuse();
  const sinceMergeBase = range[at + 2] === ".";
  const from = range.slice(0, at);
  const to = range.slice(at + (sinceMergeBase ? 3 : 2));
  for (const side of [from, to])
    if (
      !RANGE_SIDE.test(side) ||
      side.startsWith("-") ||
      side.startsWith("/") ||
      side.startsWith(".") ||
      side.endsWith(".") ||
      side.includes("..")
    )
      throw refuse();
  return { from, to, sinceMergeBase };
}

/** Run git in `cwd` and return its stdout bytes; a failure is one UsageError line naming the command. */
export function git(cwd: string, args: string[]): Buffer {
  try {
    return execFileSync("git", args, { cwd, stdio: ["ignore", "pipe", "pipe"], maxBuffer: 256 * 1024 * 1024 });
  } catch (error) {
    const stderr =
      String((error as { stderr?: Buffer }).stderr ?? "")
        .trim()
        .split("\n")[0] ?? "";
    throw new UsageError(
      /does not exist in/.test(stderr)
        ? `git ${args.join(" ")}: that file is not in that commit (${stderr}); give --trust the path the reviewers file has in the base commit`
        : `git ${args.join(" ")} failed in ${cwd}${stderr ? ` (${stderr})` : ""}; run it in the repository, with both commits fetched`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Each side of a git range names a commit of the repository at `cwd`: a ref
 * that does not is refused as that, before anything is read at it.
 */
export function requireRangeCommits(cwd: string, range: string): void {
  const { from, to } = parseGitRange(range);
  for (const side of new Set([from, to]))
    try {
      execFileSync("git", ["rev-parse", "--verify", "--quiet", `${side}^{commit}`], { cwd, stdio: "ignore" });
    } catch (error) {
      throw new UsageError(
        `--git-range ${range}: ${side} is not a commit in the repository at ${cwd}; fix the ref, or fetch it (a shallow CI checkout needs fetch-depth: 0)`,
        { cause: error },
      );
    }
}

/** The repository's top folder as git names it. */
export function gitTopLevel(cwd: string): string {
  return git(cwd, ["rev-parse", "--show-toplevel"]).toString("utf8").trim();
}

/**
 * Where changed paths are taken from: the top folder of the git checkout
 * `cwd` is in (the paths git and a plan's targets use, wherever in the
 * checkout the command runs), else `cwd` itself.
 */
export function checkoutRoot(cwd: string): string {
  try {
    return gitTopLevel(cwd);
  } catch {
    return cwd;
  }
}

/**
 * The folder changed paths are relative to for a command given `--git-range`
 * (the checkout's top folder; outside git an error) or `--changed-files`
 * (see `checkoutRoot`); with neither, `cwd`.
 */
export function changedPathsRoot(cwd: string, o: { gitRange?: string; changedFiles?: string }): string {
  if (o.gitRange !== undefined) return gitTopLevel(cwd);
  return o.changedFiles !== undefined ? checkoutRoot(cwd) : cwd;
}

/**
 * The files changed in a range (`git diff --raw -z --no-renames A...B`: since
 * B's merge base with A; `A..B`: between A and B), each with its git mode at
 * B and a digest (null, no mode: deleted): a file's or symlink's the sha256
 * of its blob (a symlink's blob is its target text), a gitlink's (submodule
 * pointer) the sha256 of the commit id it points to. Parsed linearly from
 * NUL-separated output. The blobs' sizes are asked for first (`git cat-file
 * --batch-check`) and a blob over the budget (or all of them over the
 * total) is refused, a BudgetError naming the file, its size and the limit,
 * before a byte of it is read; then one `git cat-file --batch` streams them
 * and each is hashed as its bytes come, none held whole.
 */
export async function changedFilesInRange(cwd: string, range: string, budget: ChangeBudget = CHANGE_BUDGET): Promise<ChangedFile[]> {
  const { from, to, sinceMergeBase } = parseGitRange(range);
  const fields = git(cwd, ["diff", "--raw", "--no-abbrev", "--no-renames", "-z", `${from}${sinceMergeBase ? "..." : ".."}${to}`, "--"])
    .toString("utf8")
    .split("\0");
  // Each entry is two fields: ":<old mode> <new mode> <old id> <new id> <status>", then the path.
  const entries: { path: string; mode: string; oid: string }[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const head = (fields[i] as string).split(" ");
    const p = fields[i + 1] as string;
    if (head.length !== 5 || !head[0]?.startsWith(":") || p === "")
      throw new UsageError(
        `git diff --raw for ${range} printed an entry twinlock cannot read (${JSON.stringify(fields[i])}); run it with a git that prints --raw -z`,
      );
    entries.push({ path: p, mode: head[1] as string, oid: head[3] as string });
    requireFileCountWithin(budget, entries.length, `the range ${range}`);
  }
  const blobs = new Map<string, string>();
  for (const e of entries) if (isBlobMode(e.mode) && !blobs.has(e.oid)) blobs.set(e.oid, e.path);
  const sizes = blobSizes(cwd, [...blobs.keys()]);
  let total = 0;
  for (const [oid, size] of sizes) {
    requireBytesWithin(budget.file, size, `changed file ${blobs.get(oid)} (in ${range})`, TOO_LARGE_FILE);
    total += size;
  }
  requireBytesWithin(budget.total, total, `the change ${range} (its changed files together)`, TOO_LARGE_CHANGE);
  const digests = await blobDigests(cwd, sizes);
  return entries.map((e): ChangedFile => {
    if (/^0+$/.test(e.mode)) return { path: e.path, sha256: null };
    if (e.mode === GITLINK_MODE) return { path: e.path, sha256: sha256Of(Buffer.from(e.oid, "utf8")), mode: GITLINK_MODE };
    if (!isBlobMode(e.mode))
      throw new UsageError(
        `git diff --raw for ${range} gives ${e.path} the mode ${e.mode}, which is no file, symlink or submodule pointer`,
      );
    return { path: e.path, sha256: digests.get(e.oid) ?? null, mode: e.mode as ChangedFileMode };
  });
}

/** The git modes a changed path can have: a file, an executable file, a symlink, a gitlink (submodule pointer). */
const BLOB_MODES = ["100644", "100755", "120000"] as const;
const GITLINK_MODE = "160000";

function isBlobMode(mode: string): boolean {
  return (BLOB_MODES as readonly string[]).includes(mode);
}

/** What to do about a changed file over its budget. */
const TOO_LARGE_FILE = "twinlock does not read it: keep a file that large out of the change (Git LFS commits a small pointer in its place)";
/** What to do about a change over its budget. */
const TOO_LARGE_CHANGE = "twinlock does not read it: split the work into smaller changes, each verified on its own";

function requireFileCountWithin(budget: ChangeBudget, count: number, where: string): void {
  if (count > budget.total.files)
    throw new BudgetError(
      `${where} changes over ${budget.total.files.toLocaleString("en-US")} files, the limit for a ${budget.total.what}; split the work into smaller changes`,
      { budget: budget.total.what, limit: "elements", max: budget.total.files, found: count },
    );
}

/** Each blob's size, in the order given, by one `git cat-file --batch-check` (`<id> blob <size>` a line): a few bytes a blob, whatever the blobs hold. */
function blobSizes(cwd: string, oids: readonly string[]): Map<string, number> {
  const sizes = new Map<string, number>();
  if (oids.length === 0) return sizes;
  let lines: string[];
  try {
    lines = execFileSync("git", ["cat-file", "--batch-check"], { cwd, input: `${oids.join("\n")}\n`, stdio: ["pipe", "pipe", "pipe"] })
      .toString("utf8")
      .split("\n");
  } catch (error) {
    throw new UsageError(`git cat-file --batch-check failed in ${cwd}; run it in the repository, with both commits fetched`, {
      cause: error,
    });
  }
  oids.forEach((oid, i) => {
    const [id, type, size] = (lines[i] ?? "").split(" ");
    const n = Number(size);
    if (id !== oid || type !== "blob" || !/^[0-9]+$/.test(size ?? "") || !Number.isSafeInteger(n))
      throw new UsageError(
        `git cat-file --batch-check did not find the blob ${oid} (${JSON.stringify(lines[i] ?? "")}); run it in the repository, with both commits fetched`,
      );
    sizes.set(oid, n);
  });
  return sizes;
}

/** Most bytes of git's stderr kept for a refusal (its first line is all that is shown). */
const STDERR_KEPT = 4096;

/**
 * The sha256 of each blob, streamed by one `git cat-file --batch` and hashed
 * as its bytes arrive (`<id> blob <size>\n<bytes>\n` each, parsed by
 * offsets): what is held at once is git's last chunk, whatever the blobs
 * hold. Each blob must be the one asked for, at the size `--batch-check`
 * gave (the size the budget was checked against); git stops (is killed) at
 * the first that is not.
 */
function blobDigests(cwd: string, sizes: ReadonlyMap<string, number>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const oids = [...sizes.keys()];
  if (oids.length === 0) return Promise.resolve(out);
  const fail = (why: string, cause?: unknown) =>
    new UsageError(`git cat-file --batch ${why} in ${cwd}; run it in the repository, with both commits fetched`, { cause });
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["cat-file", "--batch"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let refused: UsageError | undefined;
    const refuse = (error: UsageError) => {
      refused ??= error;
      child.kill("SIGKILL");
    };
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < STDERR_KEPT) stderr += chunk.toString("utf8").slice(0, STDERR_KEPT - stderr.length);
    });
    // Where the parse is: which blob, its header read so far, the bytes of it still to come, and then its closing newline.
    let next = 0;
    let header = "";
    let hash: Hash | undefined;
    let left = 0;
    let closing = false;
    child.stdout.on("data", (chunk: Buffer) => {
      let at = 0;
      while (at < chunk.length && !refused) {
        if (closing) {
          if (chunk[at] !== 0x0a) return refuse(fail(`printed no newline after the blob ${oids[next - 1]}`));
          closing = false;
          at++;
        } else if (hash) {
          const take = Math.min(left, chunk.length - at);
          hash.update(chunk.subarray(at, at + take));
          left -= take;
          at += take;
          if (left === 0) {
            out.set(oids[next - 1] as string, `sha256:${hash.digest("hex")}`);
            hash = undefined;
            closing = true;
          }
        } else {
          const eol = chunk.indexOf(0x0a, at);
          header += chunk.subarray(at, eol < 0 ? chunk.length : eol).toString("latin1");
          if (header.length > 200) return refuse(fail("printed a header twinlock cannot read"));
          if (eol < 0) return;
          at = eol + 1;
          const oid = oids[next];
          const want = oid === undefined ? undefined : sizes.get(oid);
          if (oid === undefined || want === undefined || header !== `${oid} blob ${want}`)
            return refuse(fail(`printed ${JSON.stringify(header)} where the blob ${oid ?? "(none)"} of ${want ?? 0} bytes belongs`));
          header = "";
          next++;
          hash = createHash("sha256");
          left = want;
          if (left === 0) {
            out.set(oid, `sha256:${hash.digest("hex")}`);
            hash = undefined;
            closing = true;
          }
        }
      }
    });
    child.on("error", (error) => reject(refused ?? fail("could not be started", error)));
    child.on("close", (code) => {
      if (refused) return reject(refused);
      if (code !== 0) return reject(fail(`failed${stderr.trim() ? ` (${stderr.trim().split("\n")[0]})` : ""}`));
      if (out.size !== oids.length || hash || closing) return reject(fail(`stopped before the blob ${oids[out.size]}`));
      resolve(out);
    });
    // git may stop reading (a refusal kills it): a closed pipe is then no second error.
    child.stdin.on("error", () => {});
    child.stdin.end(`${oids.join("\n")}\n`);
  });
}

/**
 * The changed files a list file names, one POSIX path per line relative to
 * `root` (see `checkoutRoot`; blank lines and `#` comments skipped), each
 * with its mode and digest under `root` now, as git would record them (a
 * symlink: the sha256 of its target text, mode 120000; an executable file:
 * mode 100755). Gone from the checkout: a deletion (digest null, no mode). A
 * folder is refused (a submodule checkout is judged by --git-range). Every
 * file's size is checked against the budget (each, and all together) before
 * any is read, and each is hashed in slices, never held whole.
 */
export function changedFilesFromList(listFile: string, root: string, budget: ChangeBudget = CHANGE_BUDGET): ChangedFile[] {
  let text: string;
  try {
    text = readFileSync(listFile, "utf8");
  } catch (error) {
    throw new UsageError(
      `cannot read --changed-files ${listFile} (${(error as NodeJS.ErrnoException).code}); give a file with one changed path per line`,
      {
        cause: error,
      },
    );
  }
  const paths = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  requireFileCountWithin(budget, paths.length, `--changed-files ${listFile}`);
  const found = paths.map((p): ChangedFile | ListedFile => {
    const rel = p.replace(/^\.\//, "");
    if (rel.includes("\0") || path.posix.isAbsolute(rel) || rel.split("/").includes(".."))
      throw new UsageError(`--changed-files ${listFile} names ${JSON.stringify(p)}; give paths relative to ${root}, without ..`);
    const full = path.join(root, ...rel.split("/"));
    try {
      const st = lstatSync(full);
      if (st.isSymbolicLink()) return { path: rel, sha256: sha256Of(readlinkSync(full, { encoding: "buffer" })), mode: "120000" };
      if (st.isDirectory())
        throw new UsageError(
          `--changed-files ${listFile} names ${rel}, a folder (a submodule checkout?), not a file; list the changed files, or pass --git-range to record a submodule pointer`,
        );
      if (!st.isFile()) throw new UsageError(`--changed-files ${listFile} names ${rel}, which is not a file`);
      requireBytesWithin(budget.file, st.size, `changed file ${rel} (in --changed-files ${listFile})`, TOO_LARGE_FILE);
      return { listed: true, path: rel, full, size: st.size, mode: st.mode & OWNER_EXECUTE ? "100755" : "100644" };
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      // Gone from the checkout: the change deleted it.
      if (code === "ENOENT" || code === "ENOTDIR") return { path: rel, sha256: null };
      throw unreadable(listFile, rel, error);
    }
  });
  let total = 0;
  for (const f of found) if ("listed" in f) total += f.size;
  requireBytesWithin(budget.total, total, `the files --changed-files ${listFile} names (together)`, TOO_LARGE_CHANGE);
  return found.map((f): ChangedFile => {
    if (!("listed" in f)) return f;
    try {
      return { path: f.path, sha256: hashFileWithin(f.full, f.size, budget.file, `changed file ${f.path}`), mode: f.mode };
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw unreadable(listFile, f.path, error);
    }
  });
}

/** A listed regular file, checked against its budget and not yet read. */
interface ListedFile {
  listed: true;
  path: string;
  full: string;
  size: number;
  mode: "100644" | "100755";
}

function unreadable(listFile: string, rel: string, error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException).code;
  return new UsageError(`--changed-files ${listFile} names ${rel}, which cannot be read (${code}); make it readable or leave it out`, {
    cause: error,
  });
}

/** Bytes hashed per read of a listed file. */
const HASH_SLICE = 1024 * 1024;

/**
 * The sha256 of the regular file at `full` (not followed if it became a
 * link), read in slices: a file that grew past its checked size is refused
 * with the budget, so no more than the budget is ever read.
 */
function hashFileWithin(full: string, size: number, budget: ByteBudget, where: string): string {
  const fd = openSync(full, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    if (!fstatSync(fd).isFile()) throw new UsageError(`${where} stopped being a file while twinlock read it; list it again`);
    const hash = createHash("sha256");
    const slice = Buffer.allocUnsafe(Math.min(HASH_SLICE, Math.max(size, 1)));
    let read = 0;
    for (;;) {
      const n = readSync(fd, slice, 0, slice.length, null);
      if (n === 0) break;
      read += n;
      requireBytesWithin(budget, read, `${where} (grown while read)`, TOO_LARGE_FILE);
      hash.update(slice.subarray(0, n));
    }
    return `sha256:${hash.digest("hex")}`;
  } finally {
    closeSync(fd);
  }
}

/** The bit git reads a file's executable mode from (the owner's x bit): 100755 only when the owner may execute it. */
const OWNER_EXECUTE = 0o100;

function sha256Of(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/**
 * The commit a change was judged at, as a full object ID: `--git-range`'s
 * right side resolved, or (with `--changed-files`) the checkout's HEAD when
 * nothing in it differs from HEAD, since otherwise the bytes judged are not
 * that commit's. Undefined outside git or in a changed checkout: then the
 * close records no commit and a check run names none as verified.
 */
export function commitJudged(cwd: string, o: { gitRange?: string }): string | undefined {
  const run = (args: string[]) => execFileSync("git", args, { cwd, stdio: ["ignore", "pipe", "ignore"], maxBuffer: 16 * 1024 * 1024 });
  const resolve = (rev: string) => {
    const id = run(["rev-parse", "--verify", "--quiet", `${rev}^{commit}`])
      .toString("utf8")
      .trim();
    return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(id) ? id : undefined;
  };
  try {
    if (o.gitRange !== undefined) return resolve(parseGitRange(o.gitRange).to);
    if (run(["status", "--porcelain", "-z"]).length > 0) return undefined;
    return resolve("HEAD");
  } catch {
    return undefined;
  }
}
