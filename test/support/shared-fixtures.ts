/**
 * The folders every test file of a run reads and none may write: the bundled
 * examples (EXAMPLE_SUITE and its handoffs), the unsigned copy of the example
 * suite (RUN_EXAMPLE_SUITE) and the template gate home that pins both. A test
 * that edits one of them in place breaks every other test file running at
 * the same moment (a stale pin, a changed twin), far from the test at fault;
 * gate-home-setup.ts compares them before and after each file, so the file
 * that wrote into one (or one running beside it) fails, naming what changed.
 * A test that needs a changed suite copies it (`makeGateRun({ copySuite: true })`).
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The bundled examples folder (the example suite and handoffs). */
const EXAMPLES = fileURLToPath(new URL("../../examples", import.meta.url));

/** Each shared folder of this run by what tests call it, as far as the run has made them. */
export function sharedFixtures(): Record<string, string> {
  const folders: Record<string, string> = { "examples/ (EXAMPLE_SUITE)": EXAMPLES };
  const unsigned = process.env.TWINLOCK_TEST_UNSIGNED_SUITE;
  if (unsigned) folders["the unsigned example suite (RUN_EXAMPLE_SUITE)"] = unsigned;
  const template = process.env.TWINLOCK_TEST_TEMPLATE_HOME;
  if (template) folders["the template gate home"] = template;
  return folders;
}

/** The sha256 of every entry below `dir` (file bytes, link target, or folder), by path relative to `dir`. */
export function treeDigests(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    const abs = path.join(dir, rel);
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(abs);
    } catch {
      out.set(rel, "missing");
      return;
    }
    if (stat.isSymbolicLink()) out.set(rel, `link ${readlinkSync(abs)}`);
    else if (stat.isDirectory()) {
      out.set(rel, "folder");
      for (const name of readdirSync(abs).sort()) walk(path.join(rel, name));
    } else out.set(rel, createHash("sha256").update(readFileSync(abs)).digest("hex"));
  };
  walk("");
  return out;
}

/** A snapshot of every shared folder, to compare with a later one. */
export type FixtureSnapshot = Record<string, Map<string, string>>;

export function snapshotSharedFixtures(): FixtureSnapshot {
  return Object.fromEntries(Object.entries(sharedFixtures()).map(([name, dir]) => [name, treeDigests(dir)]));
}

/** What changed between two snapshots, one line per shared folder that changed (none when nothing did). */
export function fixtureChanges(before: FixtureSnapshot, after: FixtureSnapshot): string[] {
  const lines: string[] = [];
  for (const [name, then] of Object.entries(before)) {
    const now = after[name] ?? new Map<string, string>();
    const changed = [...new Set([...then.keys(), ...now.keys()])].filter((rel) => then.get(rel) !== now.get(rel));
    const shown = changed.slice(0, 5).map((rel) => rel || ".");
    if (changed.length > 0) lines.push(`${name} changed: ${shown.join(", ")}${changed.length > 5 ? ", …" : ""}`);
  }
  return lines;
}
