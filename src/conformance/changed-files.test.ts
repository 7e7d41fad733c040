import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDeflate } from "node:zlib";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_ERRORS } from "../cli/main.js";
import { UsageError } from "../errors/errors.js";
import { BUDGETS, BudgetError } from "../input/budgets.js";
import {
  type ChangeBudget,
  changedFilesFromList,
  changedFilesInRange,
  checkoutRoot,
  commitJudged,
  parseGitRange,
} from "./changed-files.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-changed-files-")));
  made.push(dir);
  return dir;
}

const sha = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

describe("changed files from a list", () => {
  it("take their paths from the git checkout's top folder, whichever of its folders the command runs in", () => {
    const repo = folder();
    execFileSync("git", ["init", "-q", repo]);
    mkdirSync(path.join(repo, "services", "auth"), { recursive: true });
    writeFileSync(path.join(repo, "README.md"), "readme\n");
    writeFileSync(path.join(repo, "services", "auth", "verify.ts"), "export {}\n");
    const sub = path.join(repo, "agent-work");
    mkdirSync(sub);
    const list = path.join(sub, "changed.txt");
    writeFileSync(list, "README.md\nservices/auth/verify.ts\nservices/auth/removed.ts\n");
    expect(checkoutRoot(sub)).toBe(repo);
    expect(changedFilesFromList(list, checkoutRoot(sub))).toEqual([
      { path: "README.md", sha256: sha("readme\n"), mode: "100644" },
      { path: "services/auth/verify.ts", sha256: sha("export {}\n"), mode: "100644" },
      { path: "services/auth/removed.ts", sha256: null },
    ]);
  });

  it("take their paths from the current folder outside any git checkout", () => {
    const plain = folder();
    expect(checkoutRoot(plain)).toBe(plain);
  });

  it("refuse a path that climbs out of the root or is absolute, naming the root", () => {
    const plain = folder();
    const list = path.join(plain, "changed.txt");
    for (const bad of ["../etc/passwd", "/etc/passwd", "a/../../b"]) {
      writeFileSync(list, `${bad}\n`);
      expect(() => changedFilesFromList(list, plain)).toThrow(`give paths relative to ${plain}, without ..`);
    }
  });
});

describe("a git range", () => {
  it("is A...B (since the merge base) or A..B (between the two commits)", () => {
    expect(parseGitRange("origin/main...HEAD")).toEqual({ from: "origin/main", to: "HEAD", sinceMergeBase: true });
    expect(parseGitRange("abc123..HEAD~2")).toEqual({ from: "abc123", to: "HEAD~2", sinceMergeBase: false });
  });

  it("refuses what git could read as an option, a second range or a path, naming the form it wants", () => {
    for (const bad of ["-x..HEAD", "a..-p", "a....b", "a..b..c", "..b", "a..", "a.b. ..c", "a b..c", "HEAD", "a.../b", "a...-b"])
      expect(() => parseGitRange(bad), bad).toThrow("is not a range A...B (or A..B) of two commits");
  });

  it("parses or refuses any text with a UsageError, never anything else", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(".", "a", "-", "/", "~", " ", "^") }), (text) => {
        try {
          const r = parseGitRange(text);
          expect(`${r.from}${r.sinceMergeBase ? "..." : ".."}${r.to}`).toBe(text);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
        }
      }),
    );
  });

  it("refuses a hundred thousand dots with the same one line (the split is one indexOf, not a backtracking pattern)", () => {
    expect(() => parseGitRange(".".repeat(100_000))).toThrow("is not a range");
    expect(() => parseGitRange(`${"a".repeat(100_000)}..${".".repeat(100_000)}!`)).toThrow("is not a range");
  });

  it("with three dots counts only the files the head changed since it left the base, not the base's later commits", async () => {
    const repo = folder();
    const gitIn = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: repo })
        .toString()
        .trim();
    gitIn("init", "-q", "-b", "main");
    writeFileSync(path.join(repo, "README.md"), "readme\n");
    gitIn("add", "-A");
    gitIn("commit", "-q", "-m", "base");
    gitIn("checkout", "-q", "-b", "agent");
    writeFileSync(path.join(repo, "agent.txt"), "the agent's\n");
    gitIn("add", "-A");
    gitIn("commit", "-q", "-m", "agent");
    gitIn("checkout", "-q", "main");
    writeFileSync(path.join(repo, "README.md"), "readme, later\n");
    gitIn("commit", "-q", "-am", "main moves on");
    expect(await changedFilesInRange(repo, "main...agent")).toEqual([{ path: "agent.txt", sha256: sha("the agent's\n"), mode: "100644" }]);
    expect((await changedFilesInRange(repo, "main..agent")).map((f) => f.path)).toEqual(["README.md", "agent.txt"]);
  });

  it("records each path's git mode: a gitlink as a submodule pointer whose digest follows its commit, a symlink and +x apart from the bytes", async () => {
    const repo = folder();
    const gitIn = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: repo })
        .toString()
        .trim();
    gitIn("init", "-q", "-b", "main");
    mkdirSync(path.join(repo, "cart"));
    writeFileSync(path.join(repo, "cart/cache.go"), "package cart\n");
    writeFileSync(path.join(repo, "cart/run.sh"), "echo\n");
    writeFileSync(path.join(repo, "cart/link.go"), "package cart\n");
    gitIn("add", "-A");
    gitIn("commit", "-q", "-m", "base");
    const base = gitIn("rev-parse", "HEAD");
    const commit = () => {
      gitIn("commit", "-q", "-m", "change");
      return gitIn("rev-parse", "HEAD");
    };
    // A gitlink in place of cart/cache.go (attack: shown as "deleted" before), pointing at the base commit.
    gitIn("update-index", "--cacheinfo", `160000,${base},cart/cache.go`);
    // A symlink whose target text equals the old file's bytes, and +x with the bytes unchanged.
    const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: repo, input: "package cart\n" }).toString().trim();
    gitIn("update-index", "--cacheinfo", `120000,${blob},cart/link.go`);
    gitIn("update-index", "--chmod=+x", "cart/run.sh");
    const first = commit();
    expect(await changedFilesInRange(repo, `${base}..${first}`)).toEqual([
      { path: "cart/cache.go", sha256: sha(base), mode: "160000" },
      { path: "cart/link.go", sha256: sha("package cart\n"), mode: "120000" },
      { path: "cart/run.sh", sha256: sha("echo\n"), mode: "100755" },
    ]);
    // Repointing the gitlink alone changes its digest.
    gitIn("update-index", "--cacheinfo", `160000,${first},cart/cache.go`);
    const second = commit();
    expect((await changedFilesInRange(repo, `${base}..${second}`))[0]).toEqual({
      path: "cart/cache.go",
      sha256: sha(first),
      mode: "160000",
    });
    // A deletion has no mode and no digest.
    gitIn("rm", "-q", "--cached", "cart/cache.go");
    const third = commit();
    expect(await changedFilesInRange(repo, `${second}..${third}`)).toEqual([{ path: "cart/cache.go", sha256: null }]);
  });

  it("reads paths with spaces, newlines and many entries from the NUL-separated output, one blob read for all", async () => {
    const repo = folder();
    const gitIn = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: repo })
        .toString()
        .trim();
    gitIn("init", "-q", "-b", "main");
    writeFileSync(path.join(repo, "a"), "");
    gitIn("add", "-A");
    gitIn("commit", "-q", "-m", "base");
    const names = ["odd name.go", "new\nline.go", ...Array.from({ length: 300 }, (_, i) => `f${i}.txt`)];
    for (const n of names) writeFileSync(path.join(repo, n), `${n}\n`);
    gitIn("add", "-A");
    gitIn("commit", "-q", "-m", "many");
    const got = await changedFilesInRange(repo, "HEAD~1..HEAD");
    expect(got).toHaveLength(names.length);
    for (const n of names) expect(got.find((f) => f.path === n)).toEqual({ path: n, sha256: sha(`${n}\n`), mode: "100644" });
  });
});

describe("changed files from a list, by kind", () => {
  it("records a symlink by its target text, +x as an executable, and refuses a folder (a submodule checkout) as no file", () => {
    const root = folder();
    mkdirSync(path.join(root, "cart", "vendor"), { recursive: true });
    writeFileSync(path.join(root, "cart/run.sh"), "echo\n");
    chmodSync(path.join(root, "cart/run.sh"), 0o755);
    symlinkSync("package cart\n", path.join(root, "cart/link.go"));
    const list = path.join(root, "changed.txt");
    writeFileSync(list, "cart/run.sh\ncart/link.go\n");
    expect(changedFilesFromList(list, root)).toEqual([
      { path: "cart/run.sh", sha256: sha("echo\n"), mode: "100755" },
      { path: "cart/link.go", sha256: sha("package cart\n"), mode: "120000" },
    ]);
    writeFileSync(list, "cart/vendor\n");
    expect(() => changedFilesFromList(list, root)).toThrow("names cart/vendor, a folder (a submodule checkout?), not a file");
  });

  it("records a file as executable only when its owner may execute it, as git does (a group or other x bit alone is a plain file)", () => {
    const root = folder();
    execFileSync("git", ["init", "-q", root]);
    const modes = { "group-x.sh": 0o654, "other-x.sh": 0o645, "owner-x.sh": 0o744 } as const;
    for (const [name, mode] of Object.entries(modes)) {
      writeFileSync(path.join(root, name), "echo\n");
      chmodSync(path.join(root, name), mode);
    }
    const list = path.join(root, "changed.txt");
    writeFileSync(list, Object.keys(modes).join("\n"));
    const got = changedFilesFromList(list, root);
    expect(got.map((f) => [f.path, f.mode])).toEqual([
      ["group-x.sh", "100644"],
      ["other-x.sh", "100644"],
      ["owner-x.sh", "100755"],
    ]);
    // And git records the same modes for the same files.
    execFileSync("git", ["add", ...Object.keys(modes)], { cwd: root });
    const staged = execFileSync("git", ["ls-files", "--stage", ...Object.keys(modes)], { cwd: root }).toString("utf8");
    for (const f of got) expect(staged).toContain(`${f.mode} `);
    expect(staged.split("\n").filter((l) => l.startsWith("100755"))).toHaveLength(1);
  });
});

/** A git repository with a committed base, and a way to commit files onto it and name that commit's range. */
function repoWithBase() {
  const repo = folder();
  const gitIn = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: repo })
      .toString()
      .trim();
  gitIn("init", "-q", "-b", "main");
  writeFileSync(path.join(repo, "README.md"), "readme\n");
  gitIn("add", "-A");
  gitIn("commit", "-q", "-m", "base");
  const commit = (files: Record<string, string | Uint8Array>) => {
    for (const [name, bytes] of Object.entries(files)) writeFileSync(path.join(repo, name), bytes);
    gitIn("add", "-A");
    gitIn("commit", "-q", "--allow-empty", "-m", "change");
    return "HEAD~1..HEAD";
  };
  return { repo, gitIn, commit };
}

/** A budget of a few bytes, so a test's files can sit at it and one byte over it. */
const small = (file: number, total: number, files = 100): ChangeBudget => ({
  file: { what: "changed file", bytes: file },
  total: { what: "change", bytes: total, files },
});

describe("the budget for a change's files", () => {
  it("refuses a blob over the per-file budget before reading it, naming the file, its size and the limit (exit 2)", async () => {
    const { repo, commit } = repoWithBase();
    const range = commit({ "ok.txt": "x".repeat(16), "big.bin": "y".repeat(17) });
    const refusal = await changedFilesInRange(repo, range, small(16, 1000)).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(BudgetError);
    expect((refusal as BudgetError).message).toBe(
      "changed file big.bin (in HEAD~1..HEAD) is 17 bytes, over the 16-byte limit for a changed file; twinlock does not read it: keep a file that large out of the change (Git LFS commits a small pointer in its place)",
    );
    expect((refusal as BudgetError).overrun).toEqual({ budget: "changed file", limit: "bytes", max: 16, found: 17 });
    expect(CLI_ERRORS[(refusal as BudgetError).kind].exit).toBe(2);
  });

  it("hashes a blob exactly at the per-file budget, and all blobs exactly at the total", async () => {
    const { repo, commit } = repoWithBase();
    const range = commit({ "a.txt": "a".repeat(16), "b.txt": "b".repeat(16) });
    expect(await changedFilesInRange(repo, range, small(16, 32))).toEqual([
      { path: "a.txt", sha256: sha("a".repeat(16)), mode: "100644" },
      { path: "b.txt", sha256: sha("b".repeat(16)), mode: "100644" },
    ]);
    await expect(changedFilesInRange(repo, range, small(16, 31))).rejects.toThrow(
      "the change HEAD~1..HEAD (its changed files together) is 32 bytes, over the 31-byte limit for a change; twinlock does not read it: split the work",
    );
    await expect(changedFilesInRange(repo, range, small(16, 32, 1))).rejects.toThrow(
      "the range HEAD~1..HEAD changes over 1 files, the limit for a change",
    );
  });

  it("counts a blob two paths hold once toward the total", async () => {
    const { repo, commit } = repoWithBase();
    const range = commit({ "a.txt": "same bytes", "b.txt": "same bytes" });
    const got = await changedFilesInRange(repo, range, small(10, 10));
    expect(got.map((f) => f.sha256)).toEqual([sha("same bytes"), sha("same bytes")]);
  });

  it("refuses a blob one byte over the table's budget (128 MiB) from its size alone, never reading it", async () => {
    const { repo, gitIn } = repoWithBase();
    // A loose object of BUDGETS.changedFile.bytes + 1 zeros, deflated as it is written: no 128 MiB buffer, and nothing for git to add.
    const size = BUDGETS.changedFile.bytes + 1;
    const deflated: Buffer[] = [];
    const deflate = createDeflate({ level: 1 });
    deflate.on("data", (c: Buffer) => deflated.push(c));
    const done = new Promise((resolve) => deflate.on("end", resolve));
    const zeros = Buffer.alloc(1 << 20);
    const hash = createHash("sha1").update(`blob ${size}\0`);
    deflate.write(`blob ${size}\0`);
    for (let left = size; left > 0; left -= zeros.length) {
      const part = zeros.subarray(0, Math.min(left, zeros.length));
      hash.update(part);
      deflate.write(part);
    }
    deflate.end();
    await done;
    const oid = hash.digest("hex");
    mkdirSync(path.join(repo, ".git/objects", oid.slice(0, 2)), { recursive: true });
    writeFileSync(path.join(repo, ".git/objects", oid.slice(0, 2), oid.slice(2)), Buffer.concat(deflated));
    gitIn("update-index", "--add", "--cacheinfo", `100644,${oid},huge.bin`);
    gitIn("commit", "-q", "-m", "huge");
    await expect(changedFilesInRange(repo, "HEAD~1..HEAD")).rejects.toThrow(
      `changed file huge.bin (in HEAD~1..HEAD) is ${size.toLocaleString("en-US")} bytes, over the ${BUDGETS.changedFile.bytes.toLocaleString("en-US")}-byte limit for a changed file`,
    );
  });

  it("streams each blob's bytes into its sha256: the digest of its content, for any contents, sizes across git's pipe chunks included", async () => {
    const { repo, gitIn, commit } = repoWithBase();
    let round = 0;
    const content = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.uint8Array({ minLength: 60_000, maxLength: 200_000 }),
      fc.constantFrom(new Uint8Array(0), new Uint8Array(65_536).fill(10)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(content, { minLength: 1, maxLength: 4 }), async (contents) => {
        round++;
        const files = Object.fromEntries(contents.map((c, i) => [`r${round}-${i}.bin`, c]));
        const got = await changedFilesInRange(repo, commit(files));
        expect(got).toHaveLength(contents.length);
        for (const [name, bytes] of Object.entries(files)) {
          const f = got.find((g) => g.path === name);
          expect(f?.sha256).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
          // The blob hashed is the one git holds for that path.
          expect(gitIn("rev-parse", `HEAD:${name}`)).toBe(
            execFileSync("git", ["hash-object", "--stdin"], { cwd: repo, input: bytes }).toString().trim(),
          );
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 8) },
    );
  });

  it("refuses a listed file over the per-file budget, or listed files over the total, from their sizes; hashes them at the budget", () => {
    const root = folder();
    writeFileSync(path.join(root, "a.txt"), "a".repeat(16));
    writeFileSync(path.join(root, "big.bin"), "b".repeat(17));
    const list = path.join(root, "changed.txt");
    writeFileSync(list, "a.txt\nbig.bin\n");
    expect(() => changedFilesFromList(list, root, small(16, 1000))).toThrow(
      `changed file big.bin (in --changed-files ${list}) is 17 bytes, over the 16-byte limit for a changed file`,
    );
    writeFileSync(path.join(root, "big.bin"), "b".repeat(16));
    expect(changedFilesFromList(list, root, small(16, 32))).toEqual([
      { path: "a.txt", sha256: sha("a".repeat(16)), mode: "100644" },
      { path: "big.bin", sha256: sha("b".repeat(16)), mode: "100644" },
    ]);
    expect(() => changedFilesFromList(list, root, small(16, 31))).toThrow("is 32 bytes, over the 31-byte limit for a change");
  });
});

describe("the commit a close judged", () => {
  it("is the range's right side, or a clean checkout's HEAD; none in a checkout changed since HEAD, or outside git", () => {
    const repo = folder();
    const g = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: repo })
        .toString()
        .trim();
    g("init", "-q");
    writeFileSync(path.join(repo, "a.txt"), "one\n");
    g("add", "a.txt");
    g("commit", "-q", "-m", "one");
    const first = g("rev-parse", "HEAD");
    writeFileSync(path.join(repo, "a.txt"), "two\n");
    g("commit", "-q", "-am", "two");
    const second = g("rev-parse", "HEAD");
    expect(commitJudged(repo, { gitRange: `${first}...HEAD` })).toBe(second);
    expect(commitJudged(repo, { gitRange: `HEAD~1...${first}` })).toBe(first);
    expect(commitJudged(repo, {})).toBe(second);
    writeFileSync(path.join(repo, "a.txt"), "three, not committed\n");
    expect(commitJudged(repo, {})).toBeUndefined();
    expect(commitJudged(folder(), {})).toBeUndefined();
  });
});
