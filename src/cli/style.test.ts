import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { colourEnabled } from "./style.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A descriptor open on a new regular file, closed by `use`'s end. */
function withFileDescriptor(use: (fd: number) => void): void {
  const dir = mkdtempSync(path.join(tmpdir(), "twinlock-style-"));
  dirs.push(dir);
  const fd = openSync(path.join(dir, "out.txt"), "w");
  try {
    use(fd);
  } finally {
    closeSync(fd);
  }
}

describe("colourEnabled", () => {
  it("gives no colour to output written to a file", () => {
    withFileDescriptor((fd) => expect(colourEnabled(fd, {})).toBe(false));
  });

  it("colours output written to a file when FORCE_COLOR asks for it", () => {
    withFileDescriptor((fd) => expect(colourEnabled(fd, { FORCE_COLOR: "1" })).toBe(true));
  });

  it("gives no colour when NO_COLOR is set, even with FORCE_COLOR", () => {
    withFileDescriptor((fd) => expect(colourEnabled(fd, { NO_COLOR: "1", FORCE_COLOR: "1" })).toBe(false));
  });

  it("gives no colour to a descriptor that is not open", () => {
    expect(colourEnabled(987654, {})).toBe(false);
  });
});
