import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareTargets } from "./target-placeholders.js";

const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-placeholders-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;
const project = () => {
  const dir = path.join(scratch, `p${n++}`);
  mkdirSync(dir);
  return dir;
};

describe("prepareTargets", () => {
  it("leaves existing targets as they are and makes an empty placeholder, with its folders, for a new one", () => {
    const p = project();
    writeFileSync(path.join(p, "cache.go"), "x");
    const t = prepareTargets([path.join(p, "cache.go"), path.join(p, "cart", "deep", "new_test.go")]);
    expect(readFileSync(path.join(p, "cache.go"), "utf8")).toBe("x");
    expect(readFileSync(path.join(p, "cart", "deep", "new_test.go"), "utf8")).toBe("");
    expect(t.notes).toHaveLength(1);
    t.undo();
    expect(existsSync(path.join(p, "cart"))).toBe(false);
    expect(readFileSync(path.join(p, "cache.go"), "utf8")).toBe("x");
  });

  it("without placeholders (a file target written through its folder) makes only the folders a new target goes into: Claude Code's Write refuses a file it has not Read", () => {
    const p = project();
    const t = prepareTargets([path.join(p, "cart", "deep", "new_test.go")], { placeholders: false });
    expect(existsSync(path.join(p, "cart", "deep"))).toBe(true);
    expect(existsSync(path.join(p, "cart", "deep", "new_test.go"))).toBe(false);
    expect(t.notes).toEqual([expect.stringMatching(/new_test\.go does not exist yet: its folder .*cart, .*cart\/deep is made for it/)]);
    t.undo();
    expect(existsSync(path.join(p, "cart"))).toBe(false);
  });

  it("keeps a placeholder the command wrote, and the folders it is in", () => {
    const p = project();
    const file = path.join(p, "cart", "new_test.go");
    const t = prepareTargets([file]);
    writeFileSync(file, "package cart\n");
    t.undo();
    expect(readFileSync(file, "utf8")).toBe("package cart\n");
  });

  it("keeps a folder it made when the command put another file in it", () => {
    const p = project();
    const t = prepareTargets([path.join(p, "cart", "new_test.go")]);
    writeFileSync(path.join(p, "cart", "kept.go"), "y");
    t.undo();
    expect(existsSync(path.join(p, "cart", "new_test.go"))).toBe(false);
    expect(existsSync(path.join(p, "cart", "kept.go"))).toBe(true);
  });

  it("refuses to make a placeholder through a dangling link, and leaves nothing behind", () => {
    const p = project();
    const outside = path.join(scratch, `outside-${n}`);
    mkdirSync(path.join(p, "cart"));
    symlinkSync(outside, path.join(p, "cart", "new_test.go"));
    expect(() => prepareTargets([path.join(p, "cart", "new_test.go")])).toThrow(/goes through a symbolic link now/);
    expect(existsSync(outside)).toBe(false);
  });

  it("refuses a target that became a symbolic link since the session was bound", () => {
    const p = project();
    mkdirSync(path.join(scratch, `elsewhere-${n}`));
    symlinkSync(path.join(scratch, `elsewhere-${n}`), path.join(p, "cart"));
    expect(() => prepareTargets([path.join(p, "cart")])).toThrow(/goes through a symbolic link now/);
  });
});
