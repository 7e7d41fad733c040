import { closeSync, mkdirSync, mkdtempSync, readSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RefusalError } from "../errors/errors.js";
import { openBeneath } from "./open-beneath.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function tree(): { root: string; secret: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-beneath-"));
  made.push(dir);
  const root = path.join(dir, "handoff");
  mkdirSync(path.join(root, "zz"), { recursive: true });
  writeFileSync(path.join(root, "zz", "alice.key"), "dummy\n");
  const secret = path.join(dir, "keys");
  mkdirSync(secret);
  writeFileSync(path.join(secret, "alice.key"), "PRIVATE KEY\n");
  return { root, secret };
}

describe("openBeneath", () => {
  it("opens a file that really is under the folder", () => {
    const { root } = tree();
    const fd = openBeneath(realpathSync(root), "zz/alice.key", "handoff");
    const buffer = Buffer.alloc(6);
    readSync(fd, buffer, 0, 6, 0);
    closeSync(fd);
    expect(buffer.toString()).toBe("dummy\n");
  });

  it("refuses a file reached through a folder swapped for a link after the listing (the key-theft race of freeze)", () => {
    const { root, secret } = tree();
    renameSync(path.join(root, "zz"), path.join(root, "zz.orig"));
    symlinkSync(secret, path.join(root, "zz"));
    let error: unknown;
    try {
      closeSync(openBeneath(realpathSync(root), "zz/alice.key", "handoff"));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RefusalError);
    expect((error as RefusalError).message).toMatch(/^a folder of the handoff folder .*handoff was replaced by a link while it was read/);
    // Neither the name nor where the link led: they could be another folder's, which the agent must not learn.
    expect((error as RefusalError).message).not.toMatch(/keys|alice/);
    expect((error as RefusalError).details.attack).toBe("path-swap");
  });

  it("refuses a file reached after the handoff root itself was swapped for a link once it had been resolved", () => {
    const { root, secret } = tree();
    const real = realpathSync(root);
    mkdirSync(path.join(secret, "zz"));
    writeFileSync(path.join(secret, "zz", "alice.key"), "PRIVATE KEY\n");
    renameSync(root, `${root}.orig`);
    symlinkSync(secret, root);
    expect(() => closeSync(openBeneath(real, "zz/alice.key", "handoff"))).toThrow(/was replaced by a link while it was read/);
  });

  it("refuses a link at the last step", () => {
    const { root, secret } = tree();
    symlinkSync(path.join(secret, "alice.key"), path.join(root, "link.key"));
    expect(() => openBeneath(realpathSync(root), "link.key", "handoff file")).toThrow(/ELOOP/);
  });
});
