import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import { changedFilesFromList, changedFilesInRange, checkoutRoot, parseGitRange } from "./changed-files.js";

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

  it("with three dots counts only the files the head changed since it left the base, not the base's later commits", () => {
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
    expect(changedFilesInRange(repo, "main...agent")).toEqual([{ path: "agent.txt", sha256: sha("the agent's\n"), mode: "100644" }]);
    expect(changedFilesInRange(repo, "main..agent").map((f) => f.path)).toEqual(["README.md", "agent.txt"]);
  });

  it("records each path's git mode: a gitlink as a submodule pointer whose digest follows its commit, a symlink and +x apart from the bytes", () => {
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
    expect(changedFilesInRange(repo, `${base}..${first}`)).toEqual([
      { path: "cart/cache.go", sha256: sha(base), mode: "160000" },
      { path: "cart/link.go", sha256: sha("package cart\n"), mode: "120000" },
      { path: "cart/run.sh", sha256: sha("echo\n"), mode: "100755" },
    ]);
    // Repointing the gitlink alone changes its digest.
    gitIn("update-index", "--cacheinfo", `160000,${first},cart/cache.go`);
    const second = commit();
    expect(changedFilesInRange(repo, `${base}..${second}`)[0]).toEqual({ path: "cart/cache.go", sha256: sha(first), mode: "160000" });
    // A deletion has no mode and no digest.
    gitIn("rm", "-q", "--cached", "cart/cache.go");
    const third = commit();
    expect(changedFilesInRange(repo, `${second}..${third}`)).toEqual([{ path: "cart/cache.go", sha256: null }]);
  });

  it("reads paths with spaces, newlines and many entries from the NUL-separated output, one blob read for all", () => {
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
    const got = changedFilesInRange(repo, "HEAD~1..HEAD");
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
