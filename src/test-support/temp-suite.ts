import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The bundled example suite, as the README and the CLI default use it. Tests read it, never write it. */
export const EXAMPLE_SUITE = fileURLToPath(new URL("../../examples/suite", import.meta.url));

const created = new Set<string>();

let unsigned: string | undefined;

/**
 * A copy of the example suite with `require_signed_receipts: false`,
 * `separate_duties: false` and its own suite_id, for tests of the run's
 * rules that record decisions without reviewer keys. The bundled suite
 * requires signed receipts (issue 5); the attack tests cover that path.
 * Made once per test file inside its scratch root (TWINLOCK_TEST_ROOT, set
 * by the test setup and removed with it), so nothing is left in the temp folder.
 */
export function unsignedExampleSuite(): string {
  if (unsigned) return unsigned;
  // One copy for the whole test run, made by test/support/global-setup.ts and pinned in the template home; tests that change a suite copy it.
  const shared = process.env.TWINLOCK_TEST_UNSIGNED_SUITE;
  if (shared) {
    unsigned = shared;
    return shared;
  }
  const scratch = process.env.TWINLOCK_TEST_ROOT ?? makeTempDir("twinlock-unsigned-");
  const root = path.join(scratch, `unsigned-suite-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  cpSync(EXAMPLE_SUITE, root, { recursive: true });
  const config = path.join(root, "twinlock.yaml");
  writeFileSync(
    config,
    readFileSync(config, "utf8")
      .replace(/suite_id: example-engineering/, "suite_id: example-engineering-unsigned")
      .replace(/require_signed_receipts: true/, "require_signed_receipts: false")
      .replace(/separate_duties: true/, "separate_duties: false"),
  );
  unsigned = root;
  return root;
}

/** Give a suite copy its own suite_id (pins are one per suite_id), keeping everything else. */
export function renameSuiteId(root: string, id = `copy-${Math.random().toString(16).slice(2, 10)}`): string {
  const config = path.join(root, "twinlock.yaml");
  writeFileSync(config, readFileSync(config, "utf8").replace(/^suite_id: .*$/m, `suite_id: ${id}`));
  return id;
}

/** A fresh, empty temporary folder, removed by `removeTempDirs`. */
export function makeTempDir(prefix = "twinlock-test-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  created.add(dir);
  return dir;
}

/**
 * Write a suite folder from `{ "relative/path.md": text or bytes }` and return
 * its absolute path. Folders are created as needed; removed by `removeTempDirs`.
 */
export function writeSuite(files: Readonly<Record<string, string | Uint8Array>>, root = makeTempDir()): string {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  return root;
}

/** A writable copy of the example suite in a temporary folder. */
export function copyExampleSuite(): string {
  const root = makeTempDir("twinlock-example-");
  cpSync(EXAMPLE_SUITE, root, { recursive: true });
  return root;
}

/**
 * Remove every temporary folder made by this module. `rm -rf` rather than
 * `fs.rmSync`, because some fixtures build paths longer than PATH_MAX on
 * purpose and only a walker using relative opens can delete those.
 */
export function removeTempDirs(): void {
  for (const dir of created) {
    try {
      execFileSync("rm", ["-rf", "--", dir]);
    } catch {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  created.clear();
}

/** Longest path Linux opens (PATH_MAX, counting the terminating NUL). */
const PATH_MAX = 4096;

/** Make nested folders under `root` through relative `cd`s, so no single path given to the kernel is too long. */
function mkdirChain(root: string, segments: readonly string[], fileName?: string, content = ""): void {
  const script =
    'cd "$1" && shift && name="$1" && shift && for s in "$@"; do mkdir "$s" && cd "$s" || exit 1; done && if [ -n "$name" ]; then cat > "$name"; fi';
  execFileSync("bash", ["-c", script, "bash", root, fileName ?? "", ...segments], { input: content });
}

/**
 * Create under `root` a `*.md` file whose folder can be listed but whose own
 * absolute path is longer than PATH_MAX, so opening it fails (ENAMETOOLONG)
 * even for root, for whom `chmod 000` does not stop reads. Returns its POSIX
 * path relative to `root`.
 */
export function makeOverlongFile(root: string, content = "---\nprompt_id: MD-90\n---\n"): string {
  const targetDirLength = PATH_MAX - 150;
  const segments: string[] = [];
  let length = root.length;
  while (length + 201 <= targetDirLength) {
    segments.push("d".repeat(200));
    length += 201;
  }
  const rest = targetDirLength - length - 1;
  if (rest > 0) {
    segments.push("e".repeat(rest));
    length += rest + 1;
  }
  const fileName = `${"f".repeat(240)}.md`;
  if (length + 1 + fileName.length < PATH_MAX) throw new Error("fixture path is not long enough");
  mkdirChain(root, segments, fileName, content);
  return [...segments, fileName].join("/");
}

/**
 * Create under `root` a chain of folders whose deepest path is longer than
 * PATH_MAX, holding a prompt file, so listing it fails even for root.
 * Returns the chain's POSIX path relative to `root`.
 */
export function makeOverlongFolder(root: string): string {
  const segments: string[] = [];
  let length = root.length;
  while (length < PATH_MAX + 100) {
    segments.push("d".repeat(200));
    length += 201;
  }
  mkdirChain(root, segments, "deep.md", "---\nprompt_id: MD-91\n---\n");
  return segments.join("/");
}

/** True when this process runs as root, for whom file permissions do not stop reads. */
export function runningAsRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}
