/**
 * Attacks on `twinlock import` (a person imports an export the agent could
 * have edited): the chain of an export proves only itself, so a run cut short
 * or with events taken out, its chain rebuilt, still holds only genuine
 * signed decisions. Each attack here is refused.
 */
import { createPrivateKey } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { openGateHome } from "../../src/home/gate-home.js";
import { pinSuite } from "../../src/home/suite-pins.js";
import { replayEvents } from "../../src/run/apply-event.js";
import { hashEvent } from "../../src/run/event-chain.js";
import { migratePostgres, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import { runCli } from "../../src/test-support/run-cli.js";
import { homeOf, makeGateRun, makeRunTempDir, removeGateRuns, TEST_PINNER } from "../../src/test-support/run-fixture.js";
import { ALICE_KEY, driveSignedToExecuting } from "../../src/test-support/signed-run.js";
import { ensureGateKey } from "../../src/trust/gate-key.js";
import { generateReviewerKey, publicKeyLine } from "../../src/trust/keys.js";

afterAll(removeGateRuns);

const FREEZER = createPrivateKey(generateReviewerKey().privatePem);

describe.skipIf(!TEST_POSTGRES)("import of an export the agent edited, into a signing team store", () => {
  it("refuses an export cut short before its admission, whose every remaining decision is genuine: the consent never comes back unused", async () => {
    const g = makeGateRun({ copySuite: true });
    const config = path.join(g.suite, "twinlock.yaml");
    const doc = parseDocument(readFileSync(config, "utf8"));
    doc.setIn(["policies", "require_signed_receipts"], true);
    doc.set("reviewers", [
      { name: "alice", public_key: publicKeyLine(ALICE_KEY), rights: ["review", "consent", "apply", "stop"] },
      { name: "planner-agent", public_key: publicKeyLine(FREEZER), rights: ["freeze"] },
    ]);
    // The destination trusts the home's gate: the suite's gate_keys: lists it.
    doc.set("gate_keys", [{ name: "home", public_key: (await ensureGateKey(homeOf(g))).publicKey }]);
    writeFileSync(config, doc.toString());
    await pinSuite(homeOf(g), { suiteDir: g.suite, key: TEST_PINNER });
    // Genuine decisions all the way to an admission: the freeze by the planner's key, alice's review and consent.
    // The agent kept a genuine export the gate made just before the admission (every event in it, and its head, signed).
    let early = "";
    await driveSignedToExecuting(
      g,
      {},
      {
        freezeKey: FREEZER,
        beforeAdmission: async () => {
          early = path.join(makeRunTempDir("attack-"), "early");
          expect((await runCli(["export", g.runFile, "--out", early, "--home", g.home])).code).toBe(0);
        },
      },
    );

    const out = path.join(makeRunTempDir("attack-"), "bundle");
    const ex = await runCli(["export", g.runFile, "--out", out, "--home", g.home]);
    expect(ex.code, ex.output).toBe(0);

    // The agent truncates the genuine chain just before the admission: every remaining event is genuine.
    const file = path.join(out, "run.json");
    const json = JSON.parse(readFileSync(file, "utf8"));
    const cut = json.events.findIndex((e: { type: string }) => e.type === "admitted");
    json.events = json.events.slice(0, cut);
    json.revision = json.events.length;
    json.head = hashEvent(json.events[json.events.length - 1]);
    json.state = replayEvents(json.events);
    writeFileSync(file, JSON.stringify(json));

    // A person imports it into a signing team store whose pin is the same suite (no --accept-unsigned).
    const db = await freshPostgresDatabase("twinlock_attack");
    await migratePostgres(db.url);
    const destHome = path.join(makeRunTempDir("attack-dest-"), "home");
    const dest = postgresRunStore(db.url, openGateHome(destHome, { create: true }));
    await pinSuite(dest.home, { suiteDir: g.suite, key: TEST_PINNER });
    // The cut chain's head is not the one its gate signed.
    const imp = await runCli(["import", out, "--store", db.url, "--home", destHome]);
    expect(imp.code).toBe(1);
    expect(imp.stderr).toMatch(/import refused \(gate signature; .*head signature does not verify/);
    // The gate's own earlier export is signed, and still refused: an unfinished run never leaves its store.
    const kept = await runCli(["import", early, "--store", db.url, "--home", destHome]);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toMatch(/is not finished \(MD-29 is dry_run_ready\): .* imports only runs whose every pair is closed or failed/);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    expect((await c.query("SELECT count(*)::int AS n FROM twinlock_runs")).rows[0].n).toBe(0);
    await c.end();
    await dest.close();
    await db.drop();
  }, 60_000);
});
