import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { findSuiteRoot } from "./find-suite-root.js";

afterAll(removeTempDirs);

describe("findSuiteRoot", () => {
  it("uses --suite first, resolved against the working folder", () => {
    const dir = makeTempDir();
    mkdirSync(path.join(dir, "s"));
    expect(findSuiteRoot({ suite: "s", cwd: dir, env: { TWINLOCK_SUITE: "/elsewhere" } })).toBe(path.join(dir, "s"));
  });

  it("uses TWINLOCK_SUITE when --suite is not given", () => {
    const dir = makeTempDir();
    expect(findSuiteRoot({ cwd: "/", env: { TWINLOCK_SUITE: dir } })).toBe(dir);
  });

  it("finds the nearest folder upward that holds twinlock.yaml", () => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, "twinlock.yaml"), "declared_pairs: 0\n");
    const deep = path.join(dir, "a", "b");
    mkdirSync(deep, { recursive: true });
    const saved = process.env.TWINLOCK_SUITE;
    delete process.env.TWINLOCK_SUITE;
    try {
      expect(findSuiteRoot({ cwd: deep, env: {} })).toBe(dir);
    } finally {
      if (saved !== undefined) process.env.TWINLOCK_SUITE = saved;
    }
  });

  it("refuses a --suite folder that does not exist, naming it and saying what to give", () => {
    expect(() => findSuiteRoot({ suite: "/no/such/suite" })).toThrow(UsageError);
    expect(() => findSuiteRoot({ suite: "/no/such/suite" })).toThrow(/--suite \/no\/such\/suite: no such folder/);
  });

  it("refuses a --suite that is a file", () => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, "f.md"), "x");
    expect(() => findSuiteRoot({ suite: path.join(dir, "f.md") })).toThrow(/not a folder/);
  });

  it("says how to point at a suite when none is found", () => {
    const dir = makeTempDir();
    const saved = process.env.TWINLOCK_SUITE;
    delete process.env.TWINLOCK_SUITE;
    try {
      expect(() => findSuiteRoot({ cwd: dir, env: {} })).toThrow(/pass --suite DIR or set TWINLOCK_SUITE/);
    } finally {
      if (saved !== undefined) process.env.TWINLOCK_SUITE = saved;
    }
  });
});
