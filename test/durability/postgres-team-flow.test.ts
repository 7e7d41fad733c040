/**
 * Two gate servers on one PostgreSQL database, as a team runs them behind
 * one URL: every request of the flow goes to one server or the other, and
 * each server has its own gate home folder (a copy of the team's trust
 * files), so nothing may reach the other server except through the database.
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../../src/demo/demo-handoff.js";
import { admit } from "../../src/gate/admit.js";
import { initRun } from "../../src/gate/init-run.js";
import { readBlob } from "../../src/home/frozen-bytes.js";
import { openGateHome } from "../../src/home/gate-home.js";
import { pinSuite } from "../../src/home/suite-pins.js";
import { createInvitation } from "../../src/passkey/passkey-enrolment.js";
import { revokeReviewer } from "../../src/passkey/reviewer-registry.js";
import { SoftwareAuthenticator } from "../../src/passkey/software-authenticator.js";
import { createAgentToken, revokeAgentToken } from "../../src/server/agent-tokens.js";
import { apiPaths } from "../../src/server/api-paths.js";
import { createGateApp } from "../../src/server/create-gate-app.js";
import { migratePostgres, type PostgresRunStore, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import { frozenFilesOf } from "../../src/store/run-store.js";
import {
  askChallenge,
  call,
  complete,
  cookieFrom,
  EXECUTOR,
  jsonOf,
  PLANNER,
  removeServerWorlds,
  type ServerWorld,
  serverTempDir,
  TEST_HOST,
  TEST_ORIGIN,
} from "../../src/test-support/gate-server-fixture.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import { runCli } from "../../src/test-support/run-cli.js";
import { RUN_EXAMPLE_SUITE, TEST_PINNER } from "../../src/test-support/run-fixture.js";

const drops: Array<() => Promise<void>> = [];
const stores: PostgresRunStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const drop of drops.splice(0)) await drop();
  removeServerWorlds();
});
afterAll(removeServerWorlds);

/** A migrated database, with the example suite pinned in it by a person. */
async function teamDatabase(): Promise<string> {
  const db = await freshPostgresDatabase("twinlock_team");
  drops.push(db.drop);
  await migratePostgres(db.url);
  return db.url;
}

/** One server: its own gate home folder, a store on the team database, and its app. */
function server(url: string, handoffRoot?: string): ServerWorld & { store: PostgresRunStore } {
  const dir = serverTempDir("twinlock-team-server-");
  const store = postgresRunStore(url, openGateHome(path.join(dir, "home"), { create: true }));
  stores.push(store);
  const { app } = createGateApp({ store, origin: TEST_ORIGIN, allowedHosts: [TEST_HOST], tls: false, insecureHttp: false, handoffRoot });
  return {
    dir,
    home: store.home,
    store,
    suite: RUN_EXAMPLE_SUITE,
    handoff: "",
    runFile: "",
    runId: "",
    app,
    logs: [],
    plannerKey: undefined,
    signing: false,
    origin: TEST_ORIGIN,
  };
}

/** Two servers on one database, a run made by a person, and the agent's handoff in the run's folder under the servers' handoff root. */
async function team() {
  const url = await teamDatabase();
  const handoffRoot = path.join(serverTempDir("twinlock-team-handoffs-"), "handoffs");
  mkdirSync(handoffRoot, { recursive: true });
  const a = server(url, handoffRoot);
  const b = server(url, handoffRoot);
  await pinSuite(a.store.home, { suiteDir: RUN_EXAMPLE_SUITE, allowUnsigned: true, key: TEST_PINNER });
  const run = await initRun({
    run: "team/flow",
    store: b.store,
    suiteRoot: RUN_EXAMPLE_SUITE,
    planners: [PLANNER],
    mode: "APPLY_SAFE",
    environment: "staging",
    actions: "all",
    budget: null,
    actor: "alice",
  });
  const runId = run.state.run_id;
  const handoff = path.join(handoffRoot, runId);
  writeDemoHandoff(handoff, demoHandoffRecords());
  for (const w of [a, b]) Object.assign(w, { runId, handoff });
  return { url, a, b, runId, handoff, handoffRoot };
}

/** Enrol through two servers (options from one, the answer to the other) and sign in the same way. */
async function enrolAcross(first: ServerWorld, second: ServerWorld, name: string) {
  const authenticator = new SoftwareAuthenticator();
  const { token } = await createInvitation(first.home, name, ["review", "consent", "apply", "stop"]);
  const started = await jsonOf(await call(first, `/enrol/${token}/options`, { method: "POST" }));
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const response = authenticator.register(started.body.options as PublicKeyCredentialCreationOptionsJSON, TEST_ORIGIN);
  const done = await jsonOf(await call(second, `/enrol/${token}`, { json: { response } }));
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  const options = await call(second, "/signin/options", { method: "POST" });
  const pending = cookieFrom(options, "twinlock_signin") as string;
  const { challenge } = ((await options.json()) as { options: { challenge: string } }).options;
  const signed = await call(first, "/signin", {
    json: { response: authenticator.assert(challenge, { rpId: "localhost", origin: TEST_ORIGIN }) },
    cookie: pending,
  });
  expect(signed.status, await signed.clone().text()).toBe(200);
  const cookie = cookieFrom(signed, "twinlock_session") as string;
  // The session is the database's: the other server knows it, with the same CSRF token.
  const page = await (await call(second, "/", { cookie, headers: { accept: "text/html" } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]*)">/.exec(page)?.[1] ?? "";
  expect(csrf).not.toBe("");
  return { name, authenticator, cookie, csrf };
}

/** A passkey decision whose challenge comes from one server and whose signed answer goes to the other. */
async function decideAcross(
  ask: ServerWorld,
  answer: ServerWorld,
  r: Awaited<ReturnType<typeof enrolAcross>>,
  url: string,
  fields: Record<string, unknown>,
) {
  const asked = await askChallenge(ask, r, url, fields);
  expect(asked.status, JSON.stringify(asked.body)).toBe(200);
  return complete(answer, r, url, fields, asked.body as never);
}

describe.skipIf(!TEST_POSTGRES)("two gate servers on one PostgreSQL database, behind one URL", () => {
  it("run the whole flow with every step's requests split between them: enrol, sign in, freeze, review, consent, admit", async () => {
    const { url, a, b, runId, handoff } = await team();
    const alice = await enrolAcross(a, b, "alice");
    // The agent's token is made through one server's home and accepted by the other.
    const { token } = await createAgentToken(b.home, { agent: "planner-agent", runId });
    const frozen = await call(a, apiPaths.freeze(runId, PLANNER), { token, json: { handoff_dir: handoff } });
    expect(frozen.status, await frozen.clone().text()).toBe(200);
    const status = await jsonOf(await call(b, apiPaths.pair(runId, PLANNER), { token }));
    expect(status.status, JSON.stringify(status.body)).toBe(200);
    const hash = JSON.stringify(status.body).match(/sha256:[0-9a-f]{64}/)?.[0] as string;
    expect(hash).toBeTruthy();

    // Server B never saw the handoff: its revision page shows the frozen bytes it fetched from the database.
    const page = await call(b, `/runs/${runId}/pairs/${PLANNER}/revisions/1`, { cookie: alice.cookie, headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    const report = readFileSync(path.join(handoff, "report.md"), "utf8")
      .split("\n")
      .find((l) => l.trim().length > 20) as string;
    expect(await page.text()).toContain(report.trim().slice(0, 20));

    const reviewed = await decideAcross(b, a, alice, apiPaths.review(runId, PLANNER), { handoff_hash: hash, decision: "approved" });
    expect(reviewed.status, JSON.stringify(reviewed.body)).toBe(200);
    const consented = await decideAcross(a, b, alice, apiPaths.consent(runId, PLANNER), {
      handoff_hash: hash,
      approve: true,
      mode: "APPLY_SAFE",
      environment: "staging",
    });
    expect(consented.status, JSON.stringify(consented.body)).toBe(200);

    // The executor's admission, from the terminal of a third machine with its own home.
    const cli = postgresRunStore(url, openGateHome(path.join(serverTempDir(), "home"), { create: true }));
    stores.push(cli);
    const admitted = await admit({ store: cli, run: runId, executor: EXECUTOR, actor: "ci" });
    expect(admitted.admitted, JSON.stringify(admitted.checks?.filter((c) => !c.ok))).toBe(true);
    // The same consent admits once, whichever server asks.
    const again = await admit({ store: a.store, run: runId, executor: EXECUTOR, actor: "ci" });
    expect(again.admitted).toBe(false);
  });

  it("signs a revoked reviewer out of every server, and refuses a revoked token on every server", async () => {
    const { a, b, runId } = await team();
    const alice = await enrolAcross(b, a, "alice");
    const { token, record } = await createAgentToken(a.home, { agent: "planner-agent", runId });
    expect((await call(b, apiPaths.run(runId), { token })).status).toBe(200);
    await revokeAgentToken(b.home, record.id);
    const refused = await jsonOf(await call(a, apiPaths.run(runId), { token }));
    expect([refused.status, refused.body.code]).toEqual([401, "BAD_TOKEN"]);
    expect((await call(a, "/api/runs", { cookie: alice.cookie })).status).toBe(200);
    await revokeReviewer(a.home, "alice");
    for (const w of [b, a]) expect((await call(w, "/api/runs", { cookie: alice.cookie })).status).toBe(401);
  });

  it("takes a passkey challenge once: the answer replayed to the other server is refused", async () => {
    const { a, b, runId, handoff } = await team();
    const alice = await enrolAcross(a, b, "alice");
    const { token } = await createAgentToken(a.home, { agent: "planner-agent", runId });
    expect((await call(a, apiPaths.freeze(runId, PLANNER), { token, json: { handoff_dir: handoff } })).status).toBe(200);
    const hash = (await a.store.read(runId)).state.workflows[PLANNER]?.handoff?.hash as string;
    const fields = { handoff_hash: hash, decision: "approved" };
    const asked = await askChallenge(a, alice, apiPaths.review(runId, PLANNER), fields);
    const first = await complete(b, alice, apiPaths.review(runId, PLANNER), fields, asked.body as never);
    expect(first.status).toBe(200);
    const replay = await complete(a, alice, apiPaths.review(runId, PLANNER), fields, asked.body as never);
    expect(replay.status).toBe(409);
  });

  it("keeps nothing in the database for 1,200 anonymous sign-in starts, so a reviewer's sign-in started before them still completes, once, through either server", async () => {
    const { url, a, b } = await team();
    const alice = new SoftwareAuthenticator();
    const { token } = await createInvitation(a.home, "alice", ["review"]);
    const started = await jsonOf(await call(a, `/enrol/${token}/options`, { method: "POST" }));
    const response = alice.register(started.body.options as PublicKeyCredentialCreationOptionsJSON, TEST_ORIGIN);
    expect((await call(b, `/enrol/${token}`, { json: { response } })).status).toBe(200);
    const mine = await call(a, "/signin/options", { method: "POST" });
    const pending = cookieFrom(mine, "twinlock_signin") as string;
    const { challenge } = ((await mine.json()) as { options: { challenge: string } }).options;
    for (let i = 0; i < 1200; i++) await (await call(i % 2 ? a : b, "/signin/options", { method: "POST" })).text();
    const rows = async (table: string) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
      } finally {
        await c.end();
      }
    };
    expect(await rows("twinlock_challenges")).toBe(0);
    const answer = { response: alice.assert(challenge, { rpId: "localhost", origin: TEST_ORIGIN }) };
    const signed = await call(b, "/signin", { json: answer, cookie: pending });
    expect(signed.status, await signed.clone().text()).toBe(200);
    expect(cookieFrom(signed, "twinlock_session")).toBeDefined();
    // The same seal and answer, replayed to the other server: the seal was used.
    expect((await call(a, "/signin", { json: answer, cookie: pending })).status).toBe(409);
    expect(await rows("twinlock_used_signins")).toBe(1);
  });

  it("keeps at most 32 waiting decisions per reviewer in the database: her own oldest give way, never another reviewer's", async () => {
    const { a } = await team();
    const decisions = a.store.serverState?.decisions;
    if (!decisions) throw new Error("a team store keeps its decisions in the database");
    const entry = (reviewer: string, i: number) => ({
      reviewer,
      request: `review|${i}`,
      challenge: Buffer.alloc(32, i),
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    });
    const now = Date.now();
    const bobs = await decisions.add(entry("bob", 0), now);
    const alices = [];
    for (let i = 1; i <= 40; i++) alices.push(await decisions.add(entry("alice", i), now));
    expect(await decisions.take(alices[0]?.id as string, now)).toBeUndefined();
    expect((await decisions.take(alices[39]?.id as string, now))?.request).toBe("review|40");
    expect((await decisions.take(alices[8]?.id as string, now))?.request).toBe("review|9");
    expect((await decisions.take(alices[7]?.id as string, now))?.request).toBeUndefined();
    expect((await decisions.take(bobs.id, now))?.reviewer).toBe("bob");
  });

  it("refuses, on either server, a review of the hash a re-freeze through the other server replaced", async () => {
    const { a, b, runId, handoff } = await team();
    const alice = await enrolAcross(a, b, "alice");
    const { token } = await createAgentToken(a.home, { agent: "planner-agent", runId });
    expect((await call(a, apiPaths.freeze(runId, PLANNER), { token, json: { handoff_dir: handoff } })).status).toBe(200);
    const old = (await b.store.read(runId)).state.workflows[PLANNER]?.handoff?.hash as string;
    const fields = { handoff_hash: old, decision: "approved" };
    // alice reads revision 1 and is asked to sign its approval by B ...
    const asked = await askChallenge(b, alice, apiPaths.review(runId, PLANNER), fields);
    expect(asked.status).toBe(200);
    // ... while the agent revises and re-freezes through A (the freeze voids nothing yet: no review landed).
    appendFileSync(path.join(handoff, "report.md"), "\nrevised while the reviewer was reading\n");
    expect((await call(a, apiPaths.freeze(runId, PLANNER), { token, json: { handoff_dir: handoff } })).status).toBe(200);
    const signed = await complete(a, alice, apiPaths.review(runId, PLANNER), fields, asked.body as never);
    expect([signed.status, signed.body.code]).toEqual([409, "STALE_HASH"]);
    const after = (await a.store.read(runId)).state.workflows[PLANNER];
    expect(after?.reviews).toEqual([]);
    expect(after?.revision).toBe(2);
  });

  it("lets an agent freeze only inside its run's own folder under the servers' handoff root, and nothing without a root", async () => {
    const { url, a, runId, handoffRoot } = await team();
    const { token } = await createAgentToken(a.home, { agent: "planner-agent", runId });
    const refusedFor = async (w: ServerWorld, dir: string) => {
      const r = await jsonOf(await call(w, apiPaths.freeze(runId, PLANNER), { token, json: { handoff_dir: dir } }));
      expect(r.status, dir).toBe(400);
      return JSON.stringify(r.body);
    };
    // Another run's folder under the same root, the root itself, a prefix twin and a way out by `..`.
    const other = path.join(handoffRoot, "run_00000000000000ff");
    writeDemoHandoff(other, demoHandoffRecords());
    const twin = `${path.join(handoffRoot, runId)}-twin`;
    writeDemoHandoff(twin, demoHandoffRecords());
    for (const dir of [other, handoffRoot, twin, path.join(handoffRoot, runId, "..", "run_00000000000000ff")])
      expect(await refusedFor(a, dir)).toMatch(/is not inside .*this run's folder under the server's handoff root/);
    const bare = server(url);
    expect(await refusedFor(bare, path.join(handoffRoot, runId))).toMatch(/no --handoff-root/);
    expect((await a.store.read(runId)).file.revision).toBe(1);
  });

  it("re-checks the folder at every freeze: a link swapped into the run's folder after the first freeze leads nowhere, named or not", async () => {
    const { a, b, runId, handoff } = await team();
    const inner = path.join(handoff, "x", "h");
    writeDemoHandoff(inner, demoHandoffRecords());
    const { token } = await createAgentToken(a.home, { agent: "planner-agent", runId });
    expect((await call(a, apiPaths.freeze(runId, PLANNER), { token, json: { handoff_dir: inner } })).status).toBe(200);
    // The agent points x at a folder of the server's it wants to read.
    const outside = path.join(serverTempDir("twinlock-outside-"), "srv-other");
    writeDemoHandoff(path.join(outside, "h"), demoHandoffRecords());
    writeFileSync(path.join(outside, "h", "notes.md"), "SECRET-OUTSIDE-ROOT\n");
    renameSync(path.join(handoff, "x"), path.join(handoff, "x.old"));
    symlinkSync(outside, path.join(handoff, "x"));
    for (const body of [{}, { handoff_dir: inner }, { handoff_dir: path.join(outside, "h") }]) {
      const r = await jsonOf(await call(b, apiPaths.freeze(runId, PLANNER), { token, json: body }));
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(r.body)).not.toContain("SECRET");
    }
    const run = await a.store.read(runId);
    expect(run.file.revision).toBe(3);
    const plan = await call(a, `${apiPaths.pair(runId, PLANNER)}/plan`, { token });
    expect(await plan.text()).not.toContain("SECRET-OUTSIDE-ROOT");
  });

  it("takes an agent's relative handoff folder from its run's folder under the handoff root, and log and verify-log read the run from the store", async () => {
    const { url, a, runId } = await team();
    const { token } = await createAgentToken(a.home, { agent: "planner-agent", runId });
    const frozen = await call(a, apiPaths.freeze(runId, PLANNER), { token, json: { handoff_dir: "." } });
    expect(frozen.status, await frozen.clone().text()).toBe(200);
    const home = path.join(a.dir, "home");
    const log = await runCli(["log", "team/flow", "--store", url, "--home", home]);
    expect(log.code, log.output).toBe(0);
    expect(log.stdout).toMatch(/handoff_frozen/);
    expect(log.stdout).toMatch(/chain ok: 3 events/);
    const verified = await runCli(["verify-log", runId, "--store", url, "--home", home]);
    expect(verified.code, verified.output).toBe(0);
    expect(verified.stdout).toMatch(/the run's row in PostgreSQL store .* agrees/);
  });

  it("answers 503 with Retry-After, not a refusal, while the database cannot be reached, and a page says to try again", async () => {
    const down = server("postgres://postgres@127.0.0.1:1/twinlock");
    const api = await call(down, "/api/runs", { token: "tl_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" });
    expect(api.status).toBe(503);
    expect(api.headers.get("retry-after")).toBe("2");
    const body = (await api.json()) as { code: string; message: string };
    expect(body.code).toBe("UNAVAILABLE");
    expect(body.message).toMatch(/is not reachable .*nothing was recorded — try again when the database is back/);
    const page = await call(down, "/", { headers: { accept: "text/html" } });
    expect(page.status).toBe(503);
    expect(await page.text()).toContain("Unavailable for a moment");
  });

  it("exports a run that verify-log and verify-receipts check offline, with frozen bytes each server fetched by sha256", async () => {
    const { url, a, b, runId, handoff } = await team();
    const { token } = await createAgentToken(a.home, { agent: "planner-agent", runId });
    expect((await call(a, apiPaths.freeze(runId, PLANNER), { token, json: { handoff_dir: handoff } })).status).toBe(200);
    const run = await b.store.read(runId);
    for (const entry of frozenFilesOf(run.file.events)) expect(readBlob(b.store.home, entry).length).toBe(entry.size);
    // An unfinished run is exported, but no store takes it in: nothing shows its end was not cut.
    const early = path.join(serverTempDir("twinlock-team-export-"), "early");
    expect((await runCli(["export", runId, "--store", url, "--home", path.join(b.dir, "home"), "--out", early])).code).toBe(0);
    const closed = await runCli([
      "close",
      runId,
      PLANNER,
      "--result",
      "abandoned",
      "--residual",
      "the plan was not carried out",
      "--store",
      url,
      "--home",
      path.join(b.dir, "home"),
    ]);
    expect(closed.code, closed.output).toBe(0);
    const out = path.join(serverTempDir("twinlock-team-export-"), "bundle");
    const exported = await runCli(["export", runId, "--store", url, "--home", path.join(b.dir, "home"), "--out", out]);
    expect(exported.code, exported.output).toBe(0);
    const log = await runCli(["verify-log", "--exported", path.join(out, "run.json")]);
    expect(log.code, log.output).toBe(0);
    const receipts = await runCli(["verify-receipts", "--exported", path.join(out, "run.json"), "--trust", path.join(out, "trust.json")]);
    expect(receipts.code, receipts.output).toBe(0);
    // And a second team database takes it in, verified, once.
    const other = await teamDatabase();
    // A person pins the suite there first: an import is judged by the destination's own trust.
    const otherStore = postgresRunStore(other, openGateHome(path.join(serverTempDir(), "home"), { create: true }));
    stores.push(otherStore);
    await pinSuite(otherStore.home, { suiteDir: RUN_EXAMPLE_SUITE, allowUnsigned: true, key: TEST_PINNER });
    // …and trusts the first database's gate, whose key its operator printed with `twinlock trust gate-key`.
    const firstGate = await runCli(["trust", "gate-key", "--store", url, "--home", path.join(b.dir, "home"), "--json"]);
    const pinner = path.join(serverTempDir(), "pinner.key");
    writeFileSync(pinner, TEST_PINNER.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    const trusted = await runCli([
      "trust",
      "add-gate-key",
      (JSON.parse(firstGate.stdout) as { gate_key: string }).gate_key,
      "--name",
      "first-team",
      "--key",
      pinner,
      "--store",
      other,
      "--home",
      path.join(a.dir, "home"),
    ]);
    expect(trusted.code, trusted.output).toBe(0);
    const unfinished = await runCli(["import", early, "--accept-unsigned", "--store", other, "--home", path.join(a.dir, "home")]);
    expect(unfinished.code).toBe(1);
    expect(unfinished.stderr).toMatch(
      /is not finished \(MD-29 is plan_review_pending\): .* imports only runs whose every pair is closed or failed/,
    );
    const imported = await runCli(["import", out, "--accept-unsigned", "--store", other, "--home", path.join(a.dir, "home")]);
    expect(imported.code, imported.output).toBe(0);
    const twice = await runCli(["import", out, "--accept-unsigned", "--store", other, "--home", path.join(a.dir, "home")]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/an import never replaces a run/);
  });
});
