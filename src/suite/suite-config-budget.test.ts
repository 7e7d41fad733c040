import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import { makeRunTempDir, removeGateRuns } from "../test-support/run-fixture.js";
import { parseSuiteConfig, readConfigText } from "./load-suite.js";

afterAll(removeGateRuns);

describe("twinlock.yaml's budget", () => {
  it("refuses a twinlock.yaml over 1 MiB before reading it, naming the limit", () => {
    const dir = makeRunTempDir();
    writeFileSync(path.join(dir, "twinlock.yaml"), `suite_id: x\n#${"a".repeat(1024 * 1024)}\n`);
    expect(() => readConfigText(dir)).toThrow(UsageError);
    expect(() => readConfigText(dir)).toThrow(/over the 1048576-byte limit/);
  });

  it("reports a twinlock.yaml of 20,000 entries as over the 10,000-entry limit, before parsing it", () => {
    const { diagnostics } = parseSuiteConfig(`revoked:\n${"  - x\n".repeat(20_000)}`);
    expect(diagnostics.map((d) => d.message)).toEqual([
      expect.stringContaining("more than 10,000 entries, over the limit for a twinlock.yaml"),
    ]);
  });

  it("reports flow collections nested 100 deep as over the 64-level limit", () => {
    const { diagnostics } = parseSuiteConfig(`revoked: ${"[".repeat(100)}${"]".repeat(100)}\n`);
    expect(diagnostics.map((d) => d.message)).toEqual([expect.stringContaining("more than 64 levels deep")]);
  });

  it("reports 9,000 empty reviewers by their first 20 problems, not zod's every issue", () => {
    const { diagnostics } = parseSuiteConfig(`reviewers: [${"{},".repeat(8_999)}{}]\n`);
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics.length).toBeLessThanOrEqual(20);
    expect(diagnostics[0]?.message).toBeDefined();
  });
});
