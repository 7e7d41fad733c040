/**
 * The gate's own identity across stores: a team store imports only runs
 * under a trusted gate's signatures, and what it exports again is signed by
 * its own key, so the chain of custody home → team store → CI holds end to end.
 */
import { createPrivateKey } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { closeWorkflow } from "../../src/gate/close-workflow.js";
import { openGateHome } from "../../src/home/gate-home.js";
import { pinSuite } from "../../src/home/suite-pins.js";
import type { RunFile } from "../../src/run/run-schema.js";
import { migratePostgres, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import {
  consentedThenStoppedAndAbandoned,
  consentSigned,
  rebuildWithoutTheStop,
  signingGateRun,
} from "../../src/test-support/gate-signed-run.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import { runCli } from "../../src/test-support/run-cli.js";
import {
  admitStep,
  conformingChange,
  makeRunTempDir,
  PLANNER,
  removeGateRuns,
  storeOf,
  TEST_PINNER,
} from "../../src/test-support/run-fixture.js";
import { ALICE_KEY } from "../../src/test-support/signed-run.js";
import { ensureGateKey } from "../../src/trust/gate-key.js";
import { verifyGateStatement } from "../../src/trust/gate-statement.js";
import { generateReviewerKey, publicKeyLine } from "../../src/trust/keys.js";

afterAll(removeGateRuns);

/** A migrated team database and a person's home for it; its gate key made, and `extra` gate keys pinned with the suite. */
async function teamStore(suite: string) {
  const db = await freshPostgresDatabase("twinlock_gate");
  await migratePostgres(db.url);
  const home = path.join(makeRunTempDir("gate-team-"), "home");
  const store = postgresRunStore(db.url, openGateHome(home, { create: true }));
  const key = await runCli(["trust", "gate-key", "--store", db.url, "--home", home, "--json"]);
  expect(key.code, key.output).toBe(0);
  const teamKey = (JSON.parse(key.stdout) as { gate_key: string }).gate_key;
  const pin = async () => pinSuite(store.home, { suiteDir: suite, key: TEST_PINNER });
  return { db, home, store, teamKey, pin };
}

/** Add a gate key to the suite's gate_keys: (then re-pin where it is pinned). */
function pinGateKey(suite: string, name: string, key: string): void {
  const file = path.join(suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(file, "utf8"));
  const list = (doc.toJSON().gate_keys ?? []) as Array<{ name: string; public_key: string }>;
  doc.set("gate_keys", [...list, { name, public_key: key }]);
  writeFileSync(file, doc.toString());
}

describe.skipIf(!TEST_POSTGRES)("gate signatures with a team store", () => {
  it("the team store's key is made once in the database: a second server's home prints the same key", async () => {
    const { g } = await signingGateRun();
    const t = await teamStore(g.suite);
    const otherHome = path.join(makeRunTempDir("gate-team-2-"), "home");
    const again = await runCli(["trust", "gate-key", "--store", t.db.url, "--home", otherHome, "--json"]);
    expect((JSON.parse(again.stdout) as { gate_key: string }).gate_key).toBe(t.teamKey);
    const c = new pg.Client({ connectionString: t.db.url });
    await c.connect();
    expect((await c.query("SELECT count(*)::int AS n FROM twinlock_home_files WHERE name = 'gate-key.pem'")).rows[0].n).toBe(1);
    await c.end();
    await t.store.close();
    await t.db.drop();
  }, 60_000);

  it("import refuses the agent's rebuilt export (no stop, an admission the gate never made, closed verified), though every receipt in it is genuine, and writes nothing", async () => {
    const { g, gateKey } = await signingGateRun();
    await consentedThenStoppedAndAbandoned(g);
    const out = path.join(makeRunTempDir("gate-import-"), "bundle");
    expect((await runCli(["export", g.runFile, "--out", out, "--home", g.home])).code).toBe(0);
    const genuine = JSON.parse(readFileSync(path.join(out, "run.json"), "utf8")) as RunFile;
    writeFileSync(path.join(out, "run.json"), JSON.stringify(rebuildWithoutTheStop(genuine)));

    // The team store trusts the home's gate (its key is in the suite's gate_keys: as pinned there).
    expect(gateKey).toBeDefined();
    const t = await teamStore(g.suite);
    await t.pin();
    const imp = await runCli(["import", out, "--store", t.db.url, "--home", t.home]);
    expect(imp.code).toBe(1);
    expect(imp.stderr).toMatch(
      /^twinlock: import refused \(gate signature; .*\): run run_[0-9a-f]{16}'s head signature does not verify for event \d+/,
    );
    const c = new pg.Client({ connectionString: t.db.url });
    await c.connect();
    expect((await c.query("SELECT count(*)::int AS n FROM twinlock_runs")).rows[0].n).toBe(0);
    await c.end();
    await t.store.close();
    await t.db.drop();
  }, 60_000);

  it("import refuses an export signed by a gate the team store does not trust", async () => {
    const { g } = await signingGateRun();
    await consentedThenStoppedAndAbandoned(g);
    const out = path.join(makeRunTempDir("gate-import-"), "bundle");
    expect((await runCli(["export", g.runFile, "--out", out, "--home", g.home])).code).toBe(0);
    // The suite pinned in the team store lists no gate: the home's signatures are not enough.
    const file = path.join(g.suite, "twinlock.yaml");
    const doc = parseDocument(readFileSync(file, "utf8"));
    doc.delete("gate_keys");
    writeFileSync(file, doc.toString());
    const t = await teamStore(g.suite);
    await t.pin();
    const imp = await runCli(["import", out, "--store", t.db.url, "--home", t.home]);
    expect(imp.code).toBe(1);
    expect(imp.stderr).toMatch(/import refused \(gate signature; .*is signed by gate key ed25519:.*not among the trusted gate_keys/);
    await t.store.close();
    await t.db.drop();
  }, 60_000);

  it("carries a genuine run home → team store → CI: export, import, export again, verify, attest and verify-attestation all accept it", async () => {
    const { g, gateKey } = await signingGateRun();
    const t = await teamStore(g.suite);
    // The suite trusts both gates: the home that recorded the run, and the team store that holds it now.
    pinGateKey(g.suite, "team-store", t.teamKey);
    await pinSuite(openGateHome(g.home), { suiteDir: g.suite, key: TEST_PINNER });
    await t.pin();
    await consentSigned(g);
    const r = await admitStep(g);
    expect(r.admitted).toBe(true);
    await closeWorkflow({
      store: storeOf(g),
      run: g.runFile,
      planner: PLANNER,
      result: "verified",
      residual: "none",
      key: ALICE_KEY,
      executed: conformingChange(g),
    });

    const first = path.join(makeRunTempDir("gate-e2e-"), "first");
    expect((await runCli(["export", g.runFile, "--out", first, "--home", g.home])).code).toBe(0);
    const imp = await runCli(["import", first, "--store", t.db.url, "--home", t.home]);
    expect(imp.code, imp.output).toBe(0);
    const runId = (JSON.parse(readFileSync(path.join(first, "run.json"), "utf8")) as RunFile).state.run_id;
    // The team store records the head it took in as its own checkpoint, signed by its own key.
    const held = await t.store.read(runId);
    expect(held.file.gate_signature).toMatchObject({ kind: "checkpoint", gate_key: t.teamKey });
    expect(
      verifyGateStatement(
        held.file.gate_signature as NonNullable<RunFile["gate_signature"]>,
        "checkpoint",
        runId,
        held.file.revision,
        held.file.head,
      ),
    ).toBe(true);
    const second = path.join(makeRunTempDir("gate-e2e-"), "second");
    const ex = await runCli(["export", runId, "--store", t.db.url, "--home", t.home, "--out", second, "--json"]);
    expect(ex.code, ex.output).toBe(0);
    expect((JSON.parse(ex.stdout) as { gate_key: string }).gate_key).toBe(t.teamKey);
    const reExported = JSON.parse(readFileSync(path.join(second, "run.json"), "utf8")) as RunFile;
    // The team store signs the head it exports; the admission and close keep the home gate's own signatures.
    expect(reExported.gate_signature).toMatchObject({ kind: "export", gate_key: t.teamKey });
    expect(reExported.events.find((e) => e.type === "admitted")?.gate?.gate_key).toBe(gateKey);

    // CI verifies the team store's export beside the handoff it approved, with the suite's twinlock.yaml as trust.
    const ciRun = path.join(g.dir, "exported-run.json");
    writeFileSync(ciRun, readFileSync(path.join(second, "run.json")));
    const trust = path.join(g.suite, "twinlock.yaml");
    const v = await runCli(["verify", ciRun, "--trust", trust]);
    expect(v.code, v.output).toBe(0);
    expect(v.stdout).toMatch(/ok {4}gate {2}run: head signed by trusted gate/);
    const vr = await runCli(["verify-receipts", "--exported", path.join(second, "run.json"), "--trust", path.join(second, "trust.json")]);
    expect(vr.code, vr.output).toBe(0);

    const dir = makeRunTempDir("gate-e2e-attest-");
    const attester = createPrivateKey(generateReviewerKey().privatePem);
    const keyFile = path.join(dir, "attester.key");
    writeFileSync(keyFile, attester.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    writeFileSync(path.join(dir, "attester.pub"), `${publicKeyLine(attester)}\n`);
    const att = await runCli(["attest", runId, "--store", t.db.url, "--home", t.home, "--key", keyFile, "--out", path.join(dir, "out")]);
    expect(att.code, att.output).toBe(0);
    const files = readdirSync(path.join(dir, "out"))
      .filter((f) => f.endsWith(".intoto.json"))
      .map((f) => path.join(dir, "out", f));
    expect(files.some((f) => f.includes("admission"))).toBe(true);
    const va = await runCli([
      "verify-attestation",
      ...files,
      "--run",
      ciRun,
      "--attester",
      path.join(dir, "attester.pub"),
      "--trust",
      trust,
    ]);
    expect(va.code, va.output).toBe(0);
    expect(va.stdout).toContain(`${files.length} attestations verified, receipts signed by trusted reviewers`);
    expect((await ensureGateKey(t.store.home)).publicKey).toBe(t.teamKey);
    await t.store.close();
    await t.db.drop();
  }, 120_000);
});
