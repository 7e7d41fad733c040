import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";
import { SOAK } from "../support/soak.js";

/**
 * bin/twinlock.cjs loads the V8 code cache the build wrote for the bundle: the
 * command's own (from the demo's steps run as processes) when there is one,
 * else the whole demo's. V8 checks a cache only against the Node version and
 * the source's length, so caches are named after the bundle's build ID and a
 * cache of another build is never found.
 */
const DIST = path.join(REPO_ROOT, "dist");
const EXAMPLE = path.join(REPO_ROOT, "examples", "suite");
let scratch: string;

function run(bin: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    encoding: "utf8",
    env: { ...process.env, TWINLOCK_DEBUG_CODE_CACHE: "1", TWINLOCK_HOME: path.join(scratch, "no-home"), ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function buildId(): string {
  const id = /^\/\/twinlock-build ([0-9a-f]{16})\n/.exec(readFileSync(path.join(DIST, "twinlock.cjs"), "utf8").slice(0, 64))?.[1];
  expect(id, "dist/twinlock.cjs starts with its build ID line").toBeDefined();
  return id as string;
}

beforeAll(async () => {
  await ensureBuilt();
  scratch = mkdtempSync(path.join(os.tmpdir(), "twinlock-code-caches-"));
}, 240_000);

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe("the code caches", () => {
  it("are written for the whole demo and for each command the demo runs, all named after the bundle's build ID", () => {
    const id = buildId();
    const caches = readdirSync(DIST).filter((name) => name.startsWith("twinlock.cjs.") && name.endsWith(".cache"));
    expect(caches).toContain(`twinlock.cjs.${id}.cache`);
    for (const command of [
      "validate",
      "pair-status",
      "init-run",
      "freeze-pair-handoff",
      "review-pair-plan",
      "consent-pair-execution",
      "admit",
    ])
      expect(caches).toContain(`twinlock.cjs.${id}.${command}.cache`);
    // The outer loop of the step-by-step demo is no command a person runs on its own: `demo` takes the whole demo's cache.
    expect(caches).not.toContain(`twinlock.cjs.${id}.demo.cache`);
    expect(
      caches.every((name) => name.startsWith(`twinlock.cjs.${id}.`)),
      "no cache of an earlier build is left",
    ).toBe(true);
  });

  it("a command the demo runs loads its own cache, and V8 accepts it", () => {
    const r = run(DIST_BIN, ["validate", "--suite", EXAMPLE]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`twinlock: code cache twinlock.cjs.${buildId()}.validate.cache accepted\n`);
  });

  it("a command without a cache of its own loads the whole demo's", () => {
    const r = run(DIST_BIN, ["audit-bodies", "--suite", EXAMPLE]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`twinlock: code cache twinlock.cjs.${buildId()}.cache accepted\n`);
  });

  it("a bundle of another build finds none of these caches, even at the same length (V8 would run the old code)", () => {
    // A copy of the install whose bundle differs by one character and says so in its build ID; the old caches stay beside it.
    const install = path.join(scratch, "install");
    mkdirSync(path.join(install, "dist"), { recursive: true });
    cpSync(path.join(REPO_ROOT, "bin"), path.join(install, "bin"), { recursive: true });
    symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(install, "node_modules"));
    cpSync(path.join(REPO_ROOT, "package.json"), path.join(install, "package.json"));
    cpSync(path.join(REPO_ROOT, "examples"), path.join(install, "examples"), { recursive: true });
    for (const name of readdirSync(DIST)) if (name.endsWith(".cache")) cpSync(path.join(DIST, name), path.join(install, "dist", name));
    const id = buildId();
    const source = readFileSync(path.join(DIST, "twinlock.cjs"), "utf8");
    const changed = source
      .replace(`//twinlock-build ${id}`, `//twinlock-build ${"0".repeat(16)}`)
      .replace(
        "run every suite check and print the pair count and problems",
        "run every suite check and print the pair count and problemz",
      );
    expect(changed.length).toBe(source.length);
    writeFileSync(path.join(install, "dist", "twinlock.cjs"), changed);
    const r = run(path.join(install, "bin", "twinlock.cjs"), ["validate", "--help"]);
    expect(r.stderr).toBe("twinlock: code cache none\n");
    expect(r.stdout).toContain("problemz");
  });

  it("a bundle without a build ID line runs with no cache", () => {
    const install = path.join(scratch, "install");
    const source = readFileSync(path.join(DIST, "twinlock.cjs"), "utf8");
    writeFileSync(path.join(install, "dist", "twinlock.cjs"), source.replace(/^\/\/twinlock-build [0-9a-f]{16}\n/, ""));
    const r = run(path.join(install, "bin", "twinlock.cjs"), ["validate", "--suite", path.join(install, "examples", "suite")]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("twinlock: code cache none\n");
  });
});

describe("writing a cache where it cannot be written", () => {
  it("says so in one line, with no stack trace, and the command's own exit code stands", () => {
    const install = path.join(scratch, "install-unwritable");
    mkdirSync(path.join(install, "dist"), { recursive: true });
    cpSync(path.join(REPO_ROOT, "bin"), path.join(install, "bin"), { recursive: true });
    symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(install, "node_modules"));
    cpSync(path.join(REPO_ROOT, "package.json"), path.join(install, "package.json"));
    cpSync(path.join(DIST, "twinlock.cjs"), path.join(install, "dist", "twinlock.cjs"));
    // A folder where the cache file would go: the rename onto it fails, as an unwritable dist/ would for another user.
    mkdirSync(path.join(install, "dist", `twinlock.cjs.${buildId()}.validate.cache`));
    const r = run(path.join(install, "bin", "twinlock.cjs"), ["validate", "--suite", EXAMPLE], {
      TWINLOCK_WRITE_CODE_CACHE: "command",
      TWINLOCK_DEBUG_CODE_CACHE: "",
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(
      /^twinlock: could not write the code cache \S+validate\.cache \(\w+\); run the build where dist\/ is writable\n$/,
    );
    expect(readdirSync(path.join(install, "dist")).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});

describe("twinlock demo --processes", () => {
  // Some thirty CLI processes, one after the other: under TWINLOCK_SOAK=1 (.ci/run). The default run still sees each
  // step run as a process, exit for exit as the demo expects, in the build's own `demo --processes` (the per-command
  // caches the first test above finds are written by those processes).
  it.runIf(SOAK)(
    "runs every step as a process of its own, with the exit codes the in-process demo has (TWINLOCK_SOAK=1)",
    () => {
      const inProcess = run(DIST_BIN, ["demo", "--json"], { TWINLOCK_DEBUG_CODE_CACHE: "" });
      const processes = run(DIST_BIN, ["demo", "--processes", "--json"], { TWINLOCK_DEBUG_CODE_CACHE: "" });
      expect(inProcess.status).toBe(0);
      expect(processes.status, processes.stderr).toBe(0);
      const steps = (r: { stdout: string }) => (JSON.parse(r.stdout) as { steps: Array<{ command: string; exit: number }> }).steps;
      expect(steps(processes).length).toBeGreaterThanOrEqual(30);
      expect(steps(processes)).toEqual(steps(inProcess));
    },
    120_000,
  );

  it("keeps to its own gate home: a team store or default suite in the caller's environment is not used", () => {
    const r = run(DIST_BIN, ["demo", "--json"], {
      TWINLOCK_DEBUG_CODE_CACHE: "",
      TWINLOCK_STORE: "postgres://twinlock@127.0.0.1:1/nowhere",
      TWINLOCK_SUITE: path.join(scratch, "no-such-suite"),
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  }, 60_000);
});
