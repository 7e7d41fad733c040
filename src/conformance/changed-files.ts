import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import type { ChangedFile } from "./check-conformance.js";

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
 * The files changed in a range (`git diff --name-only A...B`: since B's merge
 * base with A; `A..B`: between A and B), each with the sha256 of its bytes at
 * B (null: deleted).
 */
export function changedFilesInRange(cwd: string, range: string): ChangedFile[] {
  const { from, to, sinceMergeBase } = parseGitRange(range);
  const names = git(cwd, ["diff", "--name-only", "--no-renames", "-z", `${from}${sinceMergeBase ? "..." : ".."}${to}`, "--"])
    .toString("utf8")
    .split("\0")
    .filter((p) => p !== "");
  if (names.length > MAX_CHANGED_FILES) throw new UsageError(`the range ${range} changes ${names.length} files, over ${MAX_CHANGED_FILES}`);
  return names.map((p) => {
    let sha256: string | null = null;
    try {
      sha256 = sha256Of(
        execFileSync("git", ["cat-file", "blob", `${to}:${p}`], { cwd, stdio: ["ignore", "pipe", "ignore"], maxBuffer: 1 << 30 }),
      );
    } catch {
      // Not in B: the change deleted it.
    }
    return { path: p, sha256 };
  });
}

/**
 * The changed files a list file names, one POSIX path per line relative to
 * `root` (see `checkoutRoot`; blank lines and `#` comments skipped), each
 * with the sha256 of the file under `root` now (null when it is gone: a
 * deletion).
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
    let sha256: string | null = null;
    try {
      sha256 = sha256Of(readFileSync(path.join(root, ...rel.split("/"))));
    } catch {
      // Gone from the checkout: the change deleted it.
    }
    return { path: rel, sha256 };
  });
}

function sha256Of(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}
