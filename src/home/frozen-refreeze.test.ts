import { createHash } from "node:crypto";
import { readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listHandoffFiles } from "../handoff/hash-handoff.js";
import { driveTo, freeze, homeOf, makeGateRun, makeRunTempDir, removeGateRuns, review } from "../test-support/run-fixture.js";
import { blobPath, copyHandoff, hasBlob, removeSnapshot } from "./frozen-bytes.js";
import { frozenStanding } from "./frozen-quota.js";
import { readRun } from "./run-ledger.js";

afterAll(removeGateRuns);

describe("a re-freeze copies only the bytes the home does not hold", () => {
  it("links each unchanged file from the home's store (no copy, no fsync) and copies the changed one, every file the bytes it hashed to", async () => {
    const g = { ...makeGateRun(), home: makeRunTempDir("twinlock-refreeze-home-") };
    await driveTo(g, "plan_revision_pending");
    const home = homeOf(g);
    writeFileSync(path.join(g.handoff, "report.md"), "# Report\n\nOne line changed.\n");
    const root = realpathSync(g.handoff);
    const copied = await copyHandoff({ home, root, rel: listHandoffFiles(root), standing: frozenStanding(home) });
    try {
      const linked = copied.files.filter(
        (f) => statSync(path.join(copied.dir, f.path)).ino === statSync(blobPath(home, f.sha256), { throwIfNoEntry: false })?.ino,
      );
      expect(linked.map((f) => f.path).sort()).toEqual(
        copied.files
          .filter((f) => f.path !== "report.md")
          .map((f) => f.path)
          .sort(),
      );
      expect(hasBlob(home, copied.files.find((f) => f.path === "report.md")?.sha256 ?? "")).toBe(false);
      for (const f of copied.files) {
        const bytes = readFileSync(path.join(copied.dir, f.path));
        expect(createHash("sha256").update(bytes).digest("hex")).toBe(f.sha256);
        expect(bytes.equals(readFileSync(path.join(g.handoff, f.path)))).toBe(true);
      }
    } finally {
      removeSnapshot({ dir: copied.dir });
    }
    // The private copy's links are gone; the home's blobs are not.
    for (const f of copied.files.filter((x) => x.path !== "report.md")) expect(hasBlob(home, f.sha256)).toBe(true);
    await review(g, "changes_requested").catch(() => undefined);
    await freeze(g);
    const files = readRun(g.runFile, home).state.workflows["MD-29"]?.handoff?.files ?? [];
    for (const f of files) expect(hasBlob(home, f.sha256)).toBe(true);
  });
});
