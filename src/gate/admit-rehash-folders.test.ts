import { mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { resolveHandoffRoot } from "../handoff/hash-handoff.js";
import { gateFolders } from "../home/gate-folders.js";
import { EXECUTOR, freeze, homeOf, makeGateRun, makeRunTempDir, removeGateRuns, startRun, storeOf } from "../test-support/run-fixture.js";
import { admit } from "./admit.js";

afterAll(removeGateRuns);
const keyBefore = process.env.TWINLOCK_KEY;
afterEach(() => {
  if (keyBefore === undefined) delete process.env.TWINLOCK_KEY;
  else process.env.TWINLOCK_KEY = keyBefore;
});

/**
 * A run whose handoff was frozen outside the run's folder (recorded by its
 * absolute path), and then led by the agent into `target`: the folder above
 * the recorded one is swapped for a link to target's parent, so the recorded
 * path now names `target`.
 */
async function frozenThenLedInto(target: string) {
  const g = makeGateRun();
  await startRun(g);
  const above = path.join(makeRunTempDir("twinlock-outside-"), "above");
  const recorded = path.join(above, path.basename(target));
  writeDemoHandoff(recorded, demoHandoffRecords());
  await freeze(g, { handoff: recorded });
  renameSync(above, `${above}-was`);
  symlinkSync(path.dirname(target), above);
  return g;
}

describe("admission re-hashes the handoff by the freeze's own rules", () => {
  it("refuses a frozen folder the agent led into the gate home through a link above it, naming none of the home's files", async () => {
    const g = makeGateRun();
    const home = homeOf(g);
    const led = await frozenThenLedInto(home.dir);
    const r = await admit({ store: storeOf(led), run: led.runFile, executor: EXECUTOR, dry: true, actor: "executor-agent" });
    const check = r.checks.find((c) => c.id === "4");
    expect(check?.ok).toBe(false);
    expect(check?.detail).toContain("a folder of the gate's own");
    // Nor where the home is: the refusal reaches the agent (a status over the API says it).
    expect(check?.detail).not.toContain(home.dir);
    // (Its scratch folder "tmp" is in every temporary path the message names.)
    for (const name of readdirSync(home.dir).filter((n) => n !== "tmp")) expect(check?.detail).not.toContain(name);
    expect(check?.detail).not.toContain("home.json");
  });

  it("refuses a frozen folder led into the folder of the key TWINLOCK_KEY names, naming none of its files", async () => {
    const keys = path.join(makeRunTempDir("twinlock-keys-"), "keys");
    mkdirSync(keys);
    writeFileSync(path.join(keys, "alice-secret-name.key"), "not a key, only a name to hide");
    process.env.TWINLOCK_KEY = path.join(keys, "alice-secret-name.key");
    const led = await frozenThenLedInto(keys);
    const r = await admit({ store: storeOf(led), run: led.runFile, executor: EXECUTOR, dry: true, actor: "executor-agent" });
    const check = r.checks.find((c) => c.id === "4");
    expect(check?.ok).toBe(false);
    expect(check?.detail).toContain("a folder of the gate's own");
    expect(check?.detail).not.toContain("alice-secret-name");
  });

  it("refuses to freeze the key folder itself, as it refuses the gate home", async () => {
    const keys = makeRunTempDir("twinlock-keys-");
    writeDemoHandoff(keys, demoHandoffRecords());
    process.env.TWINLOCK_KEY = path.join(keys, "alice.key");
    const g = makeGateRun();
    await startRun(g);
    await expect(freeze(g, { handoff: keys })).rejects.toThrow(/a folder of the gate's own/);
  });

  it("is one rule: the folder given as a link is refused, and a folder holding the home is refused as the home is", () => {
    const g = makeGateRun();
    const home = homeOf(g);
    const link = path.join(makeRunTempDir(), "link");
    symlinkSync(g.handoff, link);
    expect(() => resolveHandoffRoot(link, gateFolders(home))).toThrow(/symbolic link/);
    expect(() => resolveHandoffRoot(path.dirname(home.dir), gateFolders(home))).toThrow(/a folder of the gate's own/);
    expect(resolveHandoffRoot(g.handoff, gateFolders(home))).toBe(g.handoff);
  });
});
