/**
 * The next step a refusal gives for a suite that is not pinned (or changed
 * since its pin) is a pin that would work: for a suite that does not require
 * signed receipts it allows unsigned receipts, for a signing suite it does
 * not (a new user followed the hint and was refused again, UNSIGNED_SUITE).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RefusalError } from "../errors/errors.js";
import { RUN_EXAMPLE_SUITE } from "../test-support/run-fixture.js";
import { EXAMPLE_SUITE } from "../test-support/temp-suite.js";
import { openGateHome } from "./gate-home.js";
import { pinForFolder } from "./suite-pins.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function refusalOf(suite: string): RefusalError {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-repin-hint-"));
  dirs.push(dir);
  try {
    pinForFolder(openGateHome(path.join(dir, "home"), { create: true }), suite);
  } catch (error) {
    if (error instanceof RefusalError) return error;
    throw error;
  }
  throw new Error("the unpinned suite was not refused");
}

describe("the next step of a suite that is not pinned", () => {
  it("pins an unsigned suite allowing unsigned receipts, the only pin that suite can have", () => {
    const e = refusalOf(RUN_EXAMPLE_SUITE);
    expect(e.code).toBe("NOT_PINNED");
    expect(e.details.next).toMatchObject({ operation: "trust pin", args: { key: "FILE", "allow-unsigned": "" } });
  });

  it("pins a suite that requires signed receipts without allowing unsigned ones", () => {
    const e = refusalOf(EXAMPLE_SUITE);
    expect(e.code).toBe("NOT_PINNED");
    expect(e.details.next).toMatchObject({ operation: "trust pin", args: { key: "FILE" } });
    expect(Object.keys((e.details.next as { args: object }).args)).not.toContain("allow-unsigned");
  });
});
