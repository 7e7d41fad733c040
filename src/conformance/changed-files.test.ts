import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { changedFilesFromList, checkoutRoot } from "./changed-files.js";

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
      { path: "README.md", sha256: sha("readme\n") },
      { path: "services/auth/verify.ts", sha256: sha("export {}\n") },
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
