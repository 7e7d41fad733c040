import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import type { ChangedFile, ChangedFileMode } from "./check-conformance.js";

/** Most changed files one command takes. */
const MAX_CHANGED_FILES = 100_000;

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
 * NUL-separated output; the blobs are read by one `git cat-file --batch`.
 */
export function changedFilesInRange(cwd: string, range: string): ChangedFile[] {
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
    if (entries.length > MAX_CHANGED_FILES) throw new UsageError(`the range ${range} changes over ${MAX_CHANGED_FILES} files`);
  }
  const blobs = entries.filter((e) => isBlobMode(e.mode));
  const digests = blobDigests(
    cwd,
    blobs.map((e) => e.oid),
  );
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

/** The sha256 of each blob, read by one `git cat-file --batch` and parsed by offsets (`<id> blob <size>\n<bytes>\n`). */
function blobDigests(cwd: string, oids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (oids.length === 0) return out;
  let bytes: Buffer;
  try {
    bytes = execFileSync("git", ["cat-file", "--batch"], {
      cwd,
      input: `${oids.join("\n")}\n`,
      stdio: ["pipe", "pipe", "pipe"],
      maxBuffer: 1 << 30,
    });
  } catch (error) {
    throw new UsageError(`git cat-file --batch failed in ${cwd}; run it in the repository, with both commits fetched`, { cause: error });
  }
  let at = 0;
  for (const oid of oids) {
    const eol = bytes.indexOf(0x0a, at);
    const header = bytes
      .subarray(at, eol < 0 ? bytes.length : eol)
      .toString("utf8")
      .split(" ");
    const size = Number(header[2]);
    if (eol < 0 || header[0] !== oid || header[1] !== "blob" || !Number.isSafeInteger(size) || eol + 1 + size > bytes.length)
      throw new UsageError(`git cat-file --batch did not print the blob ${oid}; run it in the repository, with both commits fetched`);
    out.set(oid, sha256Of(bytes.subarray(eol + 1, eol + 1 + size)));
    at = eol + 1 + size + 1;
  }
  return out;
}

/**
 * The changed files a list file names, one POSIX path per line relative to
 * `root` (see `checkoutRoot`; blank lines and `#` comments skipped), each
 * with its mode and digest under `root` now, as git would record them (a
 * symlink: the sha256 of its target text, mode 120000; an executable file:
 * mode 100755). Gone from the checkout: a deletion (digest null, no mode). A
 * folder is refused (a submodule checkout is judged by --git-range).
 */
export function changedFilesFromList(listFile: string, root: string): ChangedFile[] {
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
  if (paths.length > MAX_CHANGED_FILES)
    throw new UsageError(`--changed-files ${listFile} names ${paths.length} files, over ${MAX_CHANGED_FILES}`);
  return paths.map((p) => {
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
      return { path: rel, sha256: sha256Of(readFileSync(full)), mode: st.mode & OWNER_EXECUTE ? "100755" : "100644" };
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      // Gone from the checkout: the change deleted it.
      if (code === "ENOENT" || code === "ENOTDIR") return { path: rel, sha256: null };
      throw new UsageError(`--changed-files ${listFile} names ${rel}, which cannot be read (${code}); make it readable or leave it out`, {
        cause: error,
      });
    }
  });
}

/** The bit git reads a file's executable mode from (the owner's x bit): 100755 only when the owner may execute it. */
const OWNER_EXECUTE = 0o100;

function sha256Of(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}
