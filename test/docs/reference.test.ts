/**
 * docs/reference.md is the contract in words: it must name every state of the
 * runtime's transition table, every admission check the runtime runs, and
 * every diagnostic code validate can print, and every budget of the budget
 * table at its value, so it cannot drift from the code.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DIAGNOSTIC_CODES } from "../../src/diagnostics/diagnostic.js";
import { BUDGETS } from "../../src/input/budgets.js";
import { STATES } from "../../src/run/transition-table.js";
import { admitStep, driveTo, makeGateRun, removeGateRuns } from "../../src/test-support/run-fixture.js";

const doc = readFileSync(path.join(import.meta.dirname, "../../docs/reference.md"), "utf8");

afterAll(removeGateRuns);

describe("docs/reference.md", () => {
  it("names every state of the transition table", () => {
    for (const state of STATES) expect(doc, state).toContain(`\`${state}\``);
  });

  it("lists every admission check the runtime runs, by its id", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const r = await admitStep(g, { dry: true });
    expect(r.checks.length).toBeGreaterThan(15);
    for (const c of r.checks) expect(doc, c.id).toMatch(new RegExp(`^\\| \`${c.id}\` \\|`, "m"));
  });

  it("accounts for every diagnostic code, by name or by its family (PAIR_*)", () => {
    const families = [...doc.matchAll(/`([A-Z][A-Z_]*_)\*`/g)].map((m) => m[1] as string);
    for (const code of DIAGNOSTIC_CODES) expect(doc.includes(`\`${code}\``) || families.some((f) => code.startsWith(f)), code).toBe(true);
  });

  it("lists every budget of the table in Limits at its value: bytes, and nesting and elements where it has them", () => {
    const limits = doc.slice(doc.indexOf("\n## Limits\n"), doc.indexOf("\n## ", doc.indexOf("\n## Limits\n") + 1));
    const rows = limits
      .split("\n")
      .filter((l) => l.startsWith("| ") && !l.startsWith("| input |"))
      .map((l) => l.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, "")));
    const size = (bytes: number) =>
      bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GiB` : bytes >= 1024 ** 2 ? `${bytes / 1024 ** 2} MiB` : `${bytes / 1024} KiB`;
    for (const [key, b] of Object.entries(BUDGETS)) {
      // The row whose first cell begins with the budget's name as a whole word ("change" is not "changed file").
      const row = rows.find((r) => {
        const first = (r[0] ?? "").replace(/`/g, "");
        return first.startsWith(b.what) && !/[a-z]/i.test(first.charAt(b.what.length));
      });
      expect(row, `${key}: no row naming "${b.what}"`).toBeDefined();
      const [, bytes, depth, elements] = row as string[];
      expect(bytes, key).toBe(size(b.bytes));
      if ("depth" in b) expect(depth, key).toMatch(new RegExp(`^${b.depth} levels`));
      if ("elements" in b) expect(elements, key).toMatch(new RegExp(`^${b.elements.toLocaleString("en-US")}\\b`));
      if ("files" in b) expect(elements, key).toBe(`${b.files.toLocaleString("en-US")} files`);
    }
  });
});
