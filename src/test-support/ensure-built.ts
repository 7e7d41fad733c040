import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import lockfile from "proper-lockfile";

/** The repository root (where package.json is). */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The built library that child processes import, as a user's program would. */
export const DIST_INDEX = path.join(REPO_ROOT, "dist", "index.js");
/** The `twinlock` command as installed: the loader that runs the one-file build (dist/twinlock.cjs). */
export const DIST_BIN = path.join(REPO_ROOT, "bin", "twinlock.cjs");
/** The one-file build of the CLI that DIST_BIN runs. */
const DIST_BUNDLE = path.join(REPO_ROOT, "dist", "twinlock.cjs");
/** The help bundle (the CLI without its command modules) that DIST_BIN runs for `--help`, `help` and `--version`. */
const DIST_HELP_BUNDLE = path.join(REPO_ROOT, "dist", "twinlock-help.cjs");

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "test-support") newest = Math.max(newest, newestSourceMtime(abs));
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
      newest = Math.max(newest, statSync(abs).mtimeMs);
    }
  }
  return newest;
}

function mtimeOrZero(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** True when dist/ is missing or older than some library source file. */
export function distIsStale(): boolean {
  const built = Math.min(mtimeOrZero(DIST_INDEX), mtimeOrZero(DIST_BUNDLE), mtimeOrZero(DIST_HELP_BUNDLE));
  return built === 0 || built < newestSourceMtime(path.join(REPO_ROOT, "src"));
}

/**
 * Build dist/ (`tsc -p tsconfig.build.json`, then the one-file CLI build) when it is missing or stale, so
 * tests that spawn real processes run the current code. Test files run in
 * parallel workers, so the build is serialised by a lock and re-checked
 * inside it. A type error elsewhere still emits JavaScript; the build is
 * accepted when it emitted fresh files, and the compiler's complaint is shown.
 */
export async function ensureBuilt(): Promise<void> {
  if (!distIsStale()) return;
  const key = createHash("sha256").update(REPO_ROOT).digest("hex").slice(0, 12);
  const release = await lockfile.lock(path.join(REPO_ROOT, "package.json"), {
    realpath: false,
    lockfilePath: path.join(os.tmpdir(), `twinlock-test-build-${key}.lock`),
    stale: 120_000,
    retries: { retries: 1200, minTimeout: 100, maxTimeout: 100 },
  });
  try {
    if (!distIsStale()) return;
    const tsc = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
    try {
      execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, stdio: "pipe" });
    } catch (error) {
      if (distIsStale())
        throw new Error(`building dist/ failed: ${String((error as { stdout?: Buffer }).stdout ?? error)}`, { cause: error });
      console.warn(`tsc reported problems but emitted dist/:\n${String((error as { stdout?: Buffer }).stdout ?? "")}`);
    }
    execFileSync(process.execPath, [path.join(REPO_ROOT, "scripts", "bundle-cli.mjs")], { cwd: REPO_ROOT, stdio: "pipe" });
  } finally {
    await release();
  }
}
