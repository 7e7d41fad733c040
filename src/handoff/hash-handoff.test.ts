import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { hashCanonical } from "../crypto/canonical-hash.js";
import { writeDemoHandoff } from "../demo/demo-handoff.js";
import { UsageError } from "../errors/errors.js";
import { runCli, STACK_FRAME } from "../test-support/run-cli.js";
import { makeRunTempDir, removeGateRuns, snapshotTree } from "../test-support/run-fixture.js";
import { hashHandoff, listHandoffFiles, MANIFEST_FORMAT, type ManifestEntry, manifestHash } from "./hash-handoff.js";

afterAll(removeGateRuns);

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** Write `files` (POSIX relative path → bytes) under a new temporary folder, in the given order. */
function writeTree(files: Array<[string, Uint8Array | string]>, dir = makeRunTempDir("twinlock-hash-")): string {
  for (const [rel, content] of files) {
    const abs = path.join(dir, ...rel.split("/"));
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  return dir;
}

const demo = () => {
  const dir = makeRunTempDir("twinlock-hash-");
  writeDemoHandoff(dir);
  return dir;
};

describe("hashHandoff", () => {
  it("hashes the RFC 8785 manifest of every file: POSIX path, byte size and sha256, sorted by path", async () => {
    const dir = writeTree([
      ["b.txt", "bee"],
      ["a/z.json", "{}"],
      ["a/b/c.md", ""],
    ]);
    const digest = await hashHandoff(dir);
    expect(digest.files).toEqual([
      { path: "a/b/c.md", size: 0, sha256: sha256(Buffer.from("")) },
      { path: "a/z.json", size: 2, sha256: sha256(Buffer.from("{}")) },
      { path: "b.txt", size: 3, sha256: sha256(Buffer.from("bee")) },
    ]);
    expect(digest.hash).toBe(hashCanonical({ format: MANIFEST_FORMAT, files: digest.files }));
    expect(digest.hash).toBe(manifestHash(digest.files));
    expect(digest.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("gives the same hash for the same files wherever the folder is and whenever it is hashed", async () => {
    const a = await hashHandoff(demo());
    const b = await hashHandoff(demo());
    expect(b).toEqual(a);
  });

  it("does not depend on the order the files were created in", async () => {
    const files: Array<[string, string]> = [
      ["evidence.json", "1"],
      ["notes/one.md", "one"],
      ["notes/two.md", "two"],
      ["z.bin", "zzz"],
    ];
    const forward = await hashHandoff(writeTree(files));
    const backward = await hashHandoff(writeTree([...files].reverse()));
    expect(backward.hash).toBe(forward.hash);
  });

  it("changes when any single byte of any file changes", async () => {
    const base = (await hashHandoff(demo())).hash;
    for (const name of ["evidence_index.json", "finding_register.json", "action_plan.json", "acceptance_criteria.json", "report.md"]) {
      const copy = demo();
      const file = path.join(copy, name);
      const bytes = readFileSync(file);
      const at = bytes.length >> 1;
      bytes[at] = (bytes[at] as number) ^ 0x01;
      writeFileSync(file, bytes);
      expect({ name, hash: (await hashHandoff(copy)).hash }).not.toEqual({ name, hash: base });
    }
  });

  it("changes when a file is added, even an empty one, or removed", async () => {
    const dir = demo();
    const base = (await hashHandoff(dir)).hash;
    writeFileSync(path.join(dir, "empty.txt"), "");
    const added = (await hashHandoff(dir)).hash;
    expect(added).not.toBe(base);
    rmSync(path.join(dir, "empty.txt"));
    expect((await hashHandoff(dir)).hash).toBe(base);
    rmSync(path.join(dir, "report.md"));
    expect((await hashHandoff(dir)).hash).not.toBe(base);
  });

  it("changes when a file is renamed or moved into a subfolder with the same bytes", async () => {
    const dir = demo();
    const base = (await hashHandoff(dir)).hash;
    renameSync(path.join(dir, "report.md"), path.join(dir, "summary.md"));
    const renamed = (await hashHandoff(dir)).hash;
    expect(renamed).not.toBe(base);
    mkdirSync(path.join(dir, "docs"));
    renameSync(path.join(dir, "summary.md"), path.join(dir, "docs", "summary.md"));
    const moved = await hashHandoff(dir);
    expect(moved.hash).not.toBe(renamed);
    expect(moved.files.map((f) => f.path)).toContain("docs/summary.md");
  });

  it("hashes files larger than one read chunk exactly as sha256 does", async () => {
    const big = randomBytes(2.5 * 1024 * 1024);
    const dir = writeTree([["big.bin", big]]);
    const { files } = await hashHandoff(dir);
    expect(files).toEqual([{ path: "big.bin", size: big.length, sha256: sha256(big) }]);
  });

  it("hashes a file of any size around the read sizes (64 KiB, one chunk) exactly as sha256 does", async () => {
    const sizes = [0, 1, 65_535, 65_536, 65_537, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1];
    const contents = sizes.map((n) => randomBytes(n));
    const dir = writeTree(contents.map((bytes, i) => [`f${i}.bin`, bytes]));
    const { files } = await hashHandoff(dir);
    expect(files).toEqual(contents.map((bytes, i) => ({ path: `f${i}.bin`, size: bytes.length, sha256: sha256(bytes) })));
  });

  it("hashes an empty folder to the manifest with no files", async () => {
    const dir = makeRunTempDir();
    expect(await hashHandoff(dir)).toEqual({ hash: manifestHash([]), files: [] });
  });
});

describe("what the handoff hash refuses", () => {
  const refusal = async (dir: string) => {
    const error = await hashHandoff(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  };

  it("refuses a symlink to a file inside the folder, naming it", async () => {
    const dir = demo();
    symlinkSync(path.join(dir, "report.md"), path.join(dir, "link.md"));
    expect(await refusal(dir)).toContain("handoff contains a symbolic link (link.md)");
  });

  it("refuses a symlink to a folder outside, naming it", async () => {
    const dir = demo();
    const outside = makeRunTempDir();
    mkdirSync(path.join(dir, "sub"));
    symlinkSync(outside, path.join(dir, "sub", "escape"));
    expect(await refusal(dir)).toContain("symbolic link (sub/escape)");
  });

  it("refuses a handoff folder that is itself a symlink", async () => {
    const real = demo();
    const link = path.join(makeRunTempDir(), "handoff");
    symlinkSync(real, link);
    expect(await refusal(link)).toContain("is a symbolic link; give the real folder");
  });

  it("refuses a special file (a FIFO), naming it", async () => {
    const dir = demo();
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    expect(await refusal(dir)).toContain("handoff contains pipe, which is not a regular file");
  });

  it("refuses a file name with a backslash, which would not mean the same path everywhere", async () => {
    const dir = demo();
    writeFileSync(path.join(dir, "a\\b.txt"), "x");
    expect(await refusal(dir)).toContain("contains a backslash or NUL");
  });

  it("refuses a missing folder and a file given as the folder", async () => {
    const dir = demo();
    expect(await refusal(path.join(dir, "nope"))).toContain("cannot be read (ENOENT)");
    expect(await refusal(path.join(dir, "report.md"))).toContain("is not a folder");
  });

  it("lists the same files readiness will read, sorted by code unit", () => {
    const dir = writeTree([
      ["B.txt", ""],
      ["a.txt", ""],
      ["a/b.txt", ""],
      ["a-b.txt", ""],
    ]);
    expect(listHandoffFiles(dir)).toEqual(["B.txt", "a-b.txt", "a.txt", "a/b.txt"]);
  });
});

describe("twinlock hash", () => {
  it("prints the hash, and with --json the manifest and total bytes", async () => {
    const dir = demo();
    const digest = await hashHandoff(dir);
    const text = await runCli(["hash", dir]);
    expect(text).toMatchObject({ code: 0, stdout: `${digest.hash}\n` });
    const json = await runCli(["hash", dir, "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: true,
      hash: digest.hash,
      files: digest.files,
      bytes: digest.files.reduce((n, f) => n + f.size, 0),
    });
  });

  it("exits 1 naming both hashes when --expect differs", async () => {
    const dir = demo();
    const digest = await hashHandoff(dir);
    const other = `sha256:${"0".repeat(64)}`;
    const r = await runCli(["hash", dir, "--expect", other]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`mismatch: expected ${other}, computed ${digest.hash}`);
  });

  for (const wrong of ["deadbeef", "sha256:XYZ", `sha256:${"A".repeat(64)}`, `sha1:${"a".repeat(40)}`, `sha256:${"a".repeat(63)}`, ""]) {
    it(`rejects the hash form ${JSON.stringify(wrong)} with exit 2, one line and no stack trace`, async () => {
      const dir = demo();
      const r = await runCli(["hash", dir, "--expect", wrong]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("is not a handoff hash; expected sha256: followed by 64 lower-case hex digits");
      expect(r.output).not.toMatch(STACK_FRAME);
    });
  }

  it("exits 2 without a stack trace for a handoff holding a symlink, and leaves it as it was", async () => {
    const dir = demo();
    symlinkSync("/etc/hostname", path.join(dir, "host"));
    const before = snapshotTree(dir);
    const r = await runCli(["hash", dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("symbolic link (host)");
    expect(r.output).not.toMatch(STACK_FRAME);
    expect(snapshotTree(dir)).toEqual(before);
  });
});

describe("the manifest hash as a pure function of paths and contents (property)", () => {
  const segment = fc.stringMatching(/^[a-z]{1,3}$/);
  const fileName = fc.stringMatching(/^[a-z]{1,3}\.txt$/);
  // File names end in .txt and folder names never do, so no path is both a file and a folder.
  const tree = fc.uniqueArray(
    fc.record({ dirs: fc.array(segment, { maxLength: 2 }), name: fileName, content: fc.uint8Array({ maxLength: 48 }) }),
    { minLength: 1, maxLength: 6, selector: (f) => [...f.dirs, f.name].join("/") },
  );
  const entries = (t: Array<{ dirs: string[]; name: string; content: Uint8Array }>): Array<[string, Uint8Array]> =>
    t.map((f) => [[...f.dirs, f.name].join("/"), f.content]);
  const expectedManifest = (files: Array<[string, Uint8Array]>): ManifestEntry[] =>
    files
      .map(([p, c]) => ({ path: p, size: c.length, sha256: sha256(c) }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  it("gives the same hash for the same tree written twice in different orders, equal to the manifest computed in memory", async () => {
    await fc.assert(
      fc.asyncProperty(tree, async (t) => {
        const files = entries(t);
        const a = await hashHandoff(writeTree(files));
        const b = await hashHandoff(writeTree([...files].reverse()));
        expect(b.hash).toBe(a.hash);
        expect(a.hash).toBe(manifestHash(expectedManifest(files)));
      }),
      { numRuns: 40 },
    );
  });

  it("changes the hash for any single-byte change of any file", async () => {
    await fc.assert(
      fc.asyncProperty(tree, fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), async (t, which, where, flip) => {
        const files = entries(t);
        const before = await hashHandoff(writeTree(files));
        const i = which % files.length;
        const [p, content] = files[i] as [string, Uint8Array];
        const changed = Uint8Array.from(content);
        let mutated: Uint8Array;
        if (changed.length === 0) mutated = Uint8Array.of(flip);
        else {
          const at = where % changed.length;
          changed[at] = (changed[at] as number) ^ flip;
          mutated = changed;
        }
        const after = await hashHandoff(writeTree(files.map(([q, c], j) => [q, j === i ? mutated : c] as [string, Uint8Array])));
        expect(after.hash).not.toBe(before.hash);
        expect(after.files.find((f) => f.path === p)?.sha256).not.toBe(before.files.find((f) => f.path === p)?.sha256);
      }),
      { numRuns: 40 },
    );
  });
});

describe("hashHandoff's limits", () => {
  it("refuses at once a handoff over 8 GiB (a sparse file), instead of reading it for hours", async () => {
    const dir = makeRunTempDir("twinlock-huge-");
    const { truncateSync, writeFileSync: write } = await import("node:fs");
    write(path.join(dir, "big.bin"), "");
    truncateSync(path.join(dir, "big.bin"), 9 * 1024 * 1024 * 1024);
    await expect(hashHandoff(dir)).rejects.toThrow(/the handoff is over 8589934592 bytes \(at big\.bin\)/);
  });
});
