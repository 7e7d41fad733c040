/**
 * A team-store run names its handoff folder from the suite's root, so the
 * gate re-hashes it where the suite is pinned and CI finds it in its own
 * checkout of the same repository, at another absolute path.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, cpSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { verifyRun } from "../../src/ci/verify-run.js";
import { demoHandoffRecords, writeDemoHandoff } from "../../src/demo/demo-handoff.js";
import { admit } from "../../src/gate/admit.js";
import { consentPairExecution } from "../../src/gate/consent-pair-execution.js";
import { freezePairHandoff } from "../../src/gate/freeze-pair-handoff.js";
import { initRun } from "../../src/gate/init-run.js";
import { pairStatusFromRun } from "../../src/gate/pair-status.js";
import { reviewPairPlan } from "../../src/gate/review-pair-plan.js";
import { openGateHome } from "../../src/home/gate-home.js";
import { pinSuite } from "../../src/home/suite-pins.js";
import { migratePostgres, type PostgresRunStore, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import { recordedHandoffDir, resolveHandoffDir } from "../../src/store/run-store.js";
import { parseSuiteConfig } from "../../src/suite/load-suite.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import { runCli } from "../../src/test-support/run-cli.js";
import { EXECUTOR, makeRunTempDir, PLANNER, RUN_EXAMPLE_SUITE, removeGateRuns, TEST_PINNER } from "../../src/test-support/run-fixture.js";
import { publicKeyLine } from "../../src/trust/keys.js";

const drops: Array<() => Promise<void>> = [];
const stores: PostgresRunStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const drop of drops.splice(0)) await drop();
});
afterAll(removeGateRuns);

/**
 * A checkout holding the suite (at its top, or in the folder `suiteDir` of it) with the agent's handoff in the
 * suite's agent-work/handoff, and a team store whose run is admitted on it.
 */
async function admittedTeamRun(suiteDir = ".") {
  const db = await freshPostgresDatabase("twinlock_handoff_path");
  drops.push(db.drop);
  await migratePostgres(db.url);
  const checkout = path.join(makeRunTempDir("team-checkout-"), "repo");
  const suite = path.join(checkout, suiteDir);
  cpSync(RUN_EXAMPLE_SUITE, suite, { recursive: true });
  // The handoff's report.md is no prompt of the suite.
  appendFileSync(path.join(suite, "twinlock.yaml"), "exclude:\n  - agent-work/**\n");
  const handoff = path.join(suite, "agent-work", "handoff");
  writeDemoHandoff(handoff, demoHandoffRecords());
  const home = path.join(makeRunTempDir("team-home-"), "home");
  const store = postgresRunStore(db.url, openGateHome(home, { create: true }));
  stores.push(store);
  await pinSuite(store.home, { suiteDir: suite, allowUnsigned: true, key: TEST_PINNER });
  const created = await initRun({
    run: "team/handoff-path",
    store,
    suiteRoot: suite,
    planners: [PLANNER],
    mode: "APPLY_SAFE",
    environment: "staging",
    actions: "all",
    budget: null,
    actor: "alice",
  });
  const ref = created.state.run_id;
  const frozen = await freezePairHandoff({ store, run: ref, planner: PLANNER, handoffDir: handoff, actor: "planner-agent" });
  const hash = frozen.workflow.handoff?.hash as string;
  await reviewPairPlan({ store, run: ref, planner: PLANNER, decision: "approved", handoffHash: hash, reviewer: "alice" });
  await consentPairExecution({ store, run: ref, planner: PLANNER, approve: true, handoffHash: hash, user: "alice" });
  return { db, home, store, ref, checkout, handoff, hash };
}

describe.skipIf(!TEST_POSTGRES)("a team-store run's handoff folder", () => {
  it("is recorded from the suite's root, re-hashed there by the gate, and found by verify in a checkout at another path", async () => {
    const t = await admittedTeamRun();
    const recorded = (await t.store.read(t.ref)).state.workflows[PLANNER]?.handoff?.dir;
    expect(recorded).toBe("suite:agent-work/handoff");
    // The gate reads it where the suite is pinned: pair-status and admission re-hash the same folder.
    const status = await pairStatusFromRun(t.store, t.ref, PLANNER);
    expect(status.state).toBe("dry_run_ready");
    expect(status.handoff_changed).toBeNull();
    const admitted = await admit({ store: t.store, run: t.ref, executor: EXECUTOR, actor: "executor-agent" });
    expect(admitted.admitted, JSON.stringify(admitted.checks.filter((c) => !c.ok))).toBe(true);

    const out = path.join(makeRunTempDir("team-export-"), "export");
    const exported = await runCli(["export", t.ref, "--out", out, "--store", t.db.url, "--home", t.home]);
    expect(exported.code, exported.output).toBe(0);
    // CI: the same repository checked out elsewhere, the gate's export in place of the agent's copy; the gate's checkout is gone.
    const ci = path.join(makeRunTempDir("ci-checkout-"), "repo");
    cpSync(t.checkout, ci, { recursive: true });
    renameSync(t.checkout, `${t.checkout}.gone`);
    mkdirSync(path.join(ci, "twinlock"));
    cpSync(path.join(out, "run.json"), path.join(ci, "twinlock", "run.json"));
    const { config } = parseSuiteConfig(readFileSync(path.join(ci, "twinlock.yaml"), "utf8"));
    const report = await verifyRun({
      runFile: path.join(ci, "twinlock", "run.json"),
      trust: { config, source: "twinlock.yaml" },
      changed: [{ path: "agent-work/handoff/action_plan.json", sha256: null }],
      root: ci,
      suiteRoot: ci,
    });
    const handoffFinding = report.findings.find((f) => f.check === "handoff");
    expect(handoffFinding, JSON.stringify(report.findings)).toMatchObject({ ok: true });
    expect(handoffFinding?.message).toMatch(/^the approved bytes are in the checkout; 2 of the plan's 2 actions admitted/);
    // The handoff folder is the run's own record in the checkout, so its files are no deviation.
    expect(report.findings.find((f) => f.check === "changed-file")).toMatchObject({
      ok: true,
      message: "inside the plan: the run's own records",
    });
    // The CLI reads the suite's folder from the twinlock.yaml it is given.
    const cli = await runCli(["verify", path.join(ci, "twinlock", "run.json"), "--trust", path.join(ci, "twinlock.yaml")]);
    expect(cli.stdout).toMatch(/^ok {4}handoff {2}MD-29→MD-30: the approved bytes are in the checkout/m);
  });
});

describe.skipIf(!TEST_POSTGRES)("a team-store run whose suite lies in a folder of the repository", () => {
  it("is verified in a CI checkout at another path, its suite: handoff folder read from --suite prompts/suite", async () => {
    const t = await admittedTeamRun("prompts/suite");
    expect((await t.store.read(t.ref)).state.workflows[PLANNER]?.handoff?.dir).toBe("suite:agent-work/handoff");
    const admitted = await admit({ store: t.store, run: t.ref, executor: EXECUTOR, actor: "executor-agent" });
    expect(admitted.admitted, JSON.stringify(admitted.checks.filter((c) => !c.ok))).toBe(true);
    const out = path.join(makeRunTempDir("team-export-"), "export");
    const exported = await runCli(["export", t.ref, "--out", out, "--store", t.db.url, "--home", t.home]);
    expect(exported.code, exported.output).toBe(0);
    // A signed trust file (`trust export`, for passkeys) says nothing of where the suite is: --suite says it.
    const keys = makeRunTempDir("team-pinner-");
    writeFileSync(path.join(keys, "pinner.key"), TEST_PINNER.export({ type: "pkcs8", format: "pem" }).toString(), { mode: 0o600 });
    writeFileSync(path.join(keys, "pinner.pub"), `${publicKeyLine(TEST_PINNER)}\n`);
    const signed = path.join(keys, "trust.json");
    const trusted = await runCli([
      "trust",
      "export",
      "--out",
      signed,
      "--key",
      path.join(keys, "pinner.key"),
      "--store",
      t.db.url,
      "--home",
      t.home,
    ]);
    expect(trusted.code, trusted.output).toBe(0);
    const ci = path.join(makeRunTempDir("ci-checkout-"), "repo");
    cpSync(t.checkout, ci, { recursive: true });
    renameSync(t.checkout, `${t.checkout}.gone`);
    mkdirSync(path.join(ci, "twinlock"));
    cpSync(path.join(out, "run.json"), path.join(ci, "twinlock", "run.json"));
    const runFile = path.join(ci, "twinlock", "run.json");
    const suite = path.join(ci, "prompts", "suite");
    // The suite's folder named outright; and read from the folder of the twinlock.yaml --trust names.
    for (const argv of [
      ["--suite", suite],
      ["--suite", suite, "--trust", path.join(suite, "twinlock.yaml")],
      ["--trust", path.join(suite, "twinlock.yaml")],
    ]) {
      const r = await runCli(["verify", runFile, ...argv]);
      expect(r.stdout, argv.join(" ")).toMatch(/^ok {4}handoff {2}MD-29→MD-30: the approved bytes are in the checkout/m);
    }
    const withSigned = ["--trust", signed, "--pinner-key", path.join(keys, "pinner.pub")];
    const named = await runCli(["verify", runFile, ...withSigned, "--suite", suite]);
    expect(named.stdout, named.output).toMatch(/^ok {4}handoff {2}MD-29→MD-30: the approved bytes are in the checkout/m);
    const before = process.cwd();
    process.chdir(ci);
    try {
      const top = await runCli(["verify", runFile, ...withSigned]);
      expect(top.stdout).toMatch(/^FAIL {2}handoff {2}MD-29→MD-30: the handoff folder suite:agent-work\/handoff cannot be hashed/m);
    } finally {
      process.chdir(before);
    }
    // The suite's folder not named: suite:agent-work/handoff is looked for at the checkout's top, where it is not.
    const unnamed = await runCli(["verify", runFile, "--trust", path.join(suite, "twinlock.yaml"), "--suite", ci]);
    expect(unnamed.stdout).toMatch(
      /^FAIL {2}handoff {2}MD-29→MD-30: the handoff folder suite:agent-work\/handoff cannot be hashed in the checkout/m,
    );
    const bad = await runCli(["verify", runFile, "--suite", path.join(ci, "nowhere")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--suite .*nowhere is no folder/);
  });
});

/** `git init` with one commit of everything in `dir`: a checkout, as a team member's clone is. */
function commitAll(dir: string): void {
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "the suite and the agent's handoff");
}

/** Run the CLI with `cwd` as its working folder, as a person in that checkout would. */
async function cliIn(cwd: string, argv: string[]) {
  const before = process.cwd();
  process.chdir(cwd);
  try {
    return await runCli(argv);
  } finally {
    process.chdir(before);
  }
}

describe.skipIf(!TEST_POSTGRES)("a team-store run's handoff folder given relative to the repository", () => {
  it("is recorded repo:REL from the checkout that froze it, and read from each checkout's top, never the server's working folder", async () => {
    const db = await freshPostgresDatabase("twinlock_repo_handoff");
    drops.push(db.drop);
    await migratePostgres(db.url);
    // Alice's checkout: the suite in prompts/suite, the agent's handoff at the repository's top (outside the suite).
    const alice = path.join(makeRunTempDir("team-alice-"), "shop");
    const suiteA = path.join(alice, "prompts", "suite");
    cpSync(RUN_EXAMPLE_SUITE, suiteA, { recursive: true });
    writeDemoHandoff(path.join(alice, "twinlock", "handoff"), demoHandoffRecords());
    commitAll(alice);
    // Bob's checkout: a clone of the same repository at another absolute path.
    const bob = path.join(makeRunTempDir("team-bob-"), "work", "shop");
    mkdirSync(path.dirname(bob), { recursive: true });
    cpSync(alice, bob, { recursive: true });
    const home = path.join(makeRunTempDir("team-home-"), "home");
    const store = postgresRunStore(db.url, openGateHome(home, { create: true }));
    stores.push(store);
    await pinSuite(store.home, { suiteDir: suiteA, allowUnsigned: true, key: TEST_PINNER });
    const created = await initRun({
      run: "team/repo-handoff",
      store,
      suiteRoot: suiteA,
      planners: [PLANNER],
      mode: "APPLY_SAFE",
      environment: "staging",
      actions: "all",
      budget: null,
      actor: "alice",
    });
    const ref = created.state.run_id;
    const common = ["--store", db.url, "--home", home];
    // Bob freezes from his checkout's top, naming the handoff as the repository has it.
    const frozen = await cliIn(bob, [
      "freeze-pair-handoff",
      ref,
      PLANNER,
      "--handoff",
      "twinlock/handoff",
      "--actor",
      "planner-agent",
      ...common,
    ]);
    expect(frozen.code, frozen.output).toBe(0);
    const recorded = (await store.read(ref)).state.workflows[PLANNER]?.handoff?.dir;
    expect(recorded).toBe("repo:twinlock/handoff");
    // Each checkout reads it from its own top: bob's, alice's; a server with no checkout from the pinned suite's.
    expect(resolveHandoffDir(recorded as string, { runFolder: undefined, suiteRoot: suiteA, repoRoot: bob })).toBe(
      path.join(bob, "twinlock", "handoff"),
    );
    const elsewhere = makeRunTempDir("team-server-cwd-");
    const before = process.cwd();
    process.chdir(elsewhere);
    try {
      expect(resolveHandoffDir(recorded as string, { runFolder: undefined, suiteRoot: suiteA })).toBe(
        path.join(realpathSync(alice), "twinlock", "handoff"),
      );
    } finally {
      process.chdir(before);
    }
    // Alice revises the plan in her checkout and re-freezes with no --handoff: her folder is read, not bob's.
    writeFileSync(path.join(alice, "twinlock", "handoff", "report.md"), "# revised by alice\n");
    const hashBefore = (await store.read(ref)).state.workflows[PLANNER]?.handoff?.hash;
    const again = await cliIn(alice, ["freeze-pair-handoff", ref, PLANNER, "--actor", "planner-agent", ...common]);
    expect(again.code, again.output).toBe(0);
    const wf = (await store.read(ref)).state.workflows[PLANNER];
    expect(wf?.handoff?.dir).toBe("repo:twinlock/handoff");
    expect(wf?.handoff?.hash).not.toBe(hashBefore);
    const hash = wf?.handoff?.hash as string;
    await reviewPairPlan({ store, run: ref, planner: PLANNER, decision: "approved", handoffHash: hash, reviewer: "alice" });
    await consentPairExecution({ store, run: ref, planner: PLANNER, approve: true, handoffHash: hash, user: "alice" });
    // The gate re-hashes at the pinned suite's checkout (alice's), which holds the approved bytes.
    const admitted = await admit({ store, run: ref, executor: EXECUTOR, actor: "executor-agent" });
    expect(admitted.admitted, JSON.stringify(admitted.checks.filter((c) => !c.ok))).toBe(true);
    // CI: a third checkout, the revised handoff committed; the gate's export in place of the agent's copy.
    const ci = path.join(makeRunTempDir("ci-checkout-"), "repo");
    cpSync(alice, ci, { recursive: true });
    const out = path.join(makeRunTempDir("team-export-"), "export");
    expect((await runCli(["export", ref, "--out", out, ...common])).code).toBe(0);
    mkdirSync(path.join(ci, "twinlock"), { recursive: true });
    cpSync(path.join(out, "run.json"), path.join(ci, "twinlock", "run.json"));
    const suiteCi = path.join(ci, "prompts", "suite");
    const verified = await cliIn(ci, ["verify", path.join(ci, "twinlock", "run.json"), "--suite", suiteCi]);
    expect(verified.stdout, verified.output).toMatch(/^ok {4}handoff {2}MD-29→MD-30: the approved bytes are in the checkout/m);
    // Bob's checkout still holds the unrevised plan: read from his top, it is not the approved bytes.
    cpSync(path.join(bob, "twinlock", "handoff"), path.join(ci, "twinlock", "handoff"), { recursive: true, force: true });
    const stale = await cliIn(ci, ["verify", path.join(ci, "twinlock", "run.json"), "--suite", suiteCi]);
    expect(stale.stdout).toMatch(/^FAIL {2}handoff {2}MD-29→MD-30/m);
  });
});

describe("the recorded form of a handoff folder", () => {
  const suiteRoot = path.resolve("/srv/repo");
  it("is relative beside a run file, suite: inside a team store's suite, and absolute elsewhere; each reads back as the same folder", () => {
    const cases: Array<[string, string | undefined, string]> = [
      ["/srv/repo/work/handoff", "/srv/repo/work", "handoff"],
      ["/srv/repo/work", "/srv/repo/work", "."],
      ["/elsewhere/handoff", "/srv/repo/work", "/elsewhere/handoff"],
      ["/srv/repo/agent-work/handoff", undefined, "suite:agent-work/handoff"],
      ["/srv/repo", undefined, "suite:."],
      ["/srv/other/handoff", undefined, "/srv/other/handoff"],
      // A folder beside the run literally named `suite:x` is never read from the suite.
      ["/srv/repo/work/suite:x", "/srv/repo/work", "./suite:x"],
    ];
    for (const [abs, runFolder, form] of cases) {
      expect(recordedHandoffDir(abs, { runFolder, suiteRoot }), abs).toBe(form);
      expect(resolveHandoffDir(form, { runFolder, suiteRoot }), form).toBe(path.resolve(abs));
    }
  });

  it("is repo: on a team store for a folder outside the suite inside the freezer's checkout, read from the reader's checkout", () => {
    const base = { runFolder: undefined, suiteRoot: path.resolve("/srv/shop/prompts/suite"), repoRoot: path.resolve("/srv/shop") };
    expect(recordedHandoffDir(path.resolve("/srv/shop/twinlock/handoff"), base)).toBe("repo:twinlock/handoff");
    expect(recordedHandoffDir(path.resolve("/srv/shop/prompts/suite/work"), base)).toBe("suite:work");
    expect(recordedHandoffDir(path.resolve("/srv/elsewhere/handoff"), base)).toBe(path.resolve("/srv/elsewhere/handoff"));
    // Without the freezer's checkout (a server's freeze) nothing is recorded repo-relative.
    expect(recordedHandoffDir(path.resolve("/srv/shop/twinlock/handoff"), { runFolder: undefined, suiteRoot: base.suiteRoot })).toBe(
      path.resolve("/srv/shop/twinlock/handoff"),
    );
    expect(resolveHandoffDir("repo:twinlock/handoff", { ...base, repoRoot: path.resolve("/ci/checkout") })).toBe(
      path.resolve("/ci/checkout/twinlock/handoff"),
    );
    // A folder beside a run file literally named `repo:x` stays that folder.
    expect(recordedHandoffDir(path.resolve("/srv/run/repo:x"), { runFolder: path.resolve("/srv/run"), suiteRoot: base.suiteRoot })).toBe(
      "./repo:x",
    );
  });

  it("reads an older team-store run's absolute folder as it is, and a suite: one from wherever the suite lies now", () => {
    expect(resolveHandoffDir("/srv/repo/agent-work/handoff", { runFolder: undefined, suiteRoot: "/ci/checkout" })).toBe(
      "/srv/repo/agent-work/handoff",
    );
    expect(resolveHandoffDir("suite:agent-work/handoff", { runFolder: "/ci/checkout/twinlock", suiteRoot: "/ci/checkout" })).toBe(
      "/ci/checkout/agent-work/handoff",
    );
  });
});
