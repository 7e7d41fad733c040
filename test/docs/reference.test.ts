/**
 * docs/reference.md is the contract in words: it must name every state of the
 * runtime's transition table, every admission check the runtime runs, and
 * every diagnostic code validate can print, so it cannot drift from the code.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DIAGNOSTIC_CODES } from "../../src/diagnostics/diagnostic.js";
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
});
