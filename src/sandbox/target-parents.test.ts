import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { bubblewrapArgv } from "./bubblewrap-argv.js";
import { newEntries, targetMounts } from "./target-parents.js";

const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-parents-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;
/** A project with `files` (a trailing `/` makes a folder). */
const project = (files: string[]) => {
  const dir = path.join(scratch, `p${n++}`);
  mkdirSync(dir);
  for (const f of files) {
    if (f.endsWith("/")) mkdirSync(path.join(dir, f), { recursive: true });
    else {
      mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      writeFileSync(path.join(dir, f), "x");
    }
  }
  return dir;
};

describe("targetMounts", () => {
  it("mounts a file target's folder, with every other entry of it read-only, and not the file alone", () => {
    const p = project(["cart/cache.go", "cart/keep.go", "cart/sub/deep.go", "top.go"]);
    const m = targetMounts([path.join(p, "cart", "cache.go")]);
    expect(m.folders).toEqual([]);
    expect(m.parents).toEqual([
      { dir: path.join(p, "cart"), readOnly: [path.join(p, "cart", "keep.go"), path.join(p, "cart", "sub")], targets: ["cache.go"] },
    ]);
  });

  it("mounts two file targets of one folder through it once, neither read-only; a new target (not there yet) likewise", () => {
    const p = project(["cart/a.go", "cart/b.go", "cart/c.go"]);
    const m = targetMounts([path.join(p, "cart", "a.go"), path.join(p, "cart", "b.go"), path.join(p, "cart", "new_test.go")]);
    expect(m.parents).toEqual([
      { dir: path.join(p, "cart"), readOnly: [path.join(p, "cart", "c.go")], targets: ["a.go", "b.go", "new_test.go"] },
    ]);
  });

  it("needs nothing more for a file target inside a folder target: the folder target is mounted whole", () => {
    const p = project(["cart/sub/x.go", "cart/y.go"]);
    const m = targetMounts([path.join(p, "cart"), path.join(p, "cart", "sub", "x.go")]);
    expect(m).toEqual({ folders: [path.join(p, "cart")], parents: [] });
  });

  it("mounts nested file targets' folders ancestors first, so a deeper folder is writable again after it was made read-only", () => {
    const p = project(["a/x.go", "a/b/y.go", "a/b/z.go", "a/c/"]);
    const m = targetMounts([path.join(p, "a", "b", "y.go"), path.join(p, "a", "x.go"), path.join(p, "a", "c")]);
    expect(m.folders).toEqual([path.join(p, "a", "c")]);
    expect(m.parents.map((x) => x.dir)).toEqual([path.join(p, "a"), path.join(p, "a", "b")]);
    const argv = bubblewrapArgv({
      bwrap: "/b",
      cmd: ["sh"],
      cwd: p,
      writable: m.folders,
      parents: m.parents,
      state: [],
      seccompFd: 3,
      infoFd: 4,
    });
    const at = (flag: string, q: string) => argv.findIndex((v, i) => v === flag && argv[i + 1] === q && argv[i + 2] === q);
    // a writable, then a/b and a/c read-only in it, then a/b writable with a/b/z.go read-only, then the folder target a/c.
    expect(at("--bind", path.join(p, "a"))).toBeLessThan(at("--ro-bind", path.join(p, "a", "b")));
    expect(at("--ro-bind", path.join(p, "a", "b"))).toBeLessThan(at("--bind", path.join(p, "a", "b")));
    expect(at("--bind", path.join(p, "a", "b"))).toBeLessThan(at("--ro-bind", path.join(p, "a", "b", "z.go")));
    expect(at("--ro-bind", path.join(p, "a", "c"))).toBeLessThan(at("--bind", path.join(p, "a", "c")));
    expect(at("--ro-bind", path.join(p, "a", "b", "y.go"))).toBe(-1);
    expect(at("--ro-bind", path.join(p, "a", "x.go"))).toBe(-1);
  });

  it("refuses, in one line saying to admit the folder or pass --hook-only, a target's folder with more entries than the budget", () => {
    const p = project(["big/t.go", "big/1", "big/2", "big/3"]);
    expect(() => targetMounts([path.join(p, "big", "t.go")], true, 4)).not.toThrow();
    expect(() => targetMounts([path.join(p, "big", "t.go")], true, 3)).toThrow(
      /^the folder .*big of the file target .*t\.go holds 4 entries, more than the 3 .*: admit the folder .*big as a target instead, or pass --hook-only[^\n]*$/,
    );
  });

  it("refuses a symbolic link beside a file target: a mount on it would protect what it points to, not the link", () => {
    const p = project(["cart/cache.go"]);
    symlinkSync("/etc/hostname", path.join(p, "cart", "link"));
    expect(() => targetMounts([path.join(p, "cart", "cache.go")])).toThrow(
      /cart\/link is a symbolic link beside the file target .*--hook-only/,
    );
  });

  it("keeps every existing entry but the targets read-only, whatever the names (property)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.stringMatching(/^[a-z0-9._-]{1,12}$/).filter((s) => s !== "." && s !== ".."),
          { minLength: 1, maxLength: 12 },
        ),
        (names) => {
          const p = project(names.map((x) => `d/${x}`));
          const [first, ...rest] = names;
          const m = targetMounts([path.join(p, "d", first as string)]);
          expect(m.parents[0]?.readOnly.sort()).toEqual(rest.map((x) => path.join(p, "d", x)).sort());
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe("newEntries", () => {
  it("names what is in a target's folder after that was not there before and is no target", () => {
    const p = project(["cart/cache.go", "cart/keep.go"]);
    const m = targetMounts([path.join(p, "cart", "cache.go"), path.join(p, "cart", "new_test.go")]);
    expect(newEntries(m.parents)).toEqual([]);
    writeFileSync(path.join(p, "cart", "new_test.go"), "y");
    writeFileSync(path.join(p, "cart", "stray.go"), "y");
    writeFileSync(path.join(p, "cart", "cache.go.tmp.1.2"), "y");
    expect(newEntries(m.parents)).toEqual([path.join(p, "cart", "cache.go.tmp.1.2"), path.join(p, "cart", "stray.go")]);
  });
});
