import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { closeWorkflow } from "../gate/close-workflow.js";
import { raiseStop } from "../gate/hard-stops.js";
import { type CliRun, runCli } from "../test-support/run-cli.js";
import { type GateRun, homeOf, makeGateRun, removeGateRuns, startRun, storeOf } from "../test-support/run-fixture.js";
import {
  aliceKeyFile,
  aliceTrustFile,
  driveSignedPairToExecuting,
  driveSignedToExecuting,
  MALLORY_KEY,
} from "../test-support/signed-run.js";
import { ensureGateKey } from "../trust/gate-key.js";

afterAll(removeGateRuns);

const gitIn = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", ...args], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  })
    .toString()
    .trim();

/**
 * A git repository holding an executing run (alice's signed review and
 * consent), its handoff and the trust file on the base commit; `change`
 * writes the executor's files and commits them as the head.
 */
async function repoWithRun(
  change: Record<string, string>,
  trust = aliceTrustFile(),
  handoffName?: string,
): Promise<{ g: GateRun; base: string; head: string }> {
  const g = makeGateRun();
  if (handoffName !== undefined) {
    const renamed = path.join(g.dir, handoffName);
    renameSync(g.handoff, renamed);
    g.handoff = renamed;
  }
  await driveSignedToExecuting(g);
  return commitRunAndChange(g, trust, change);
}

/**
 * Commit the run's folder as the base (the trust file pinning alice and the
 * gate's key as `twinlock trust gate-key` printed it), then `change` as the
 * executor's head.
 */
async function commitRunAndChange(
  g: GateRun,
  trust: string,
  change: Record<string, string>,
): Promise<{ g: GateRun; base: string; head: string }> {
  const gateKey = (await ensureGateKey(homeOf(g))).publicKey;
  writeFileSync(path.join(g.dir, "twinlock.yaml"), `${trust}gate_keys:\n  - name: the-gate\n    public_key: "${gateKey}"\n`);
  gitIn(g.dir, "init", "-q", "-b", "main");
  gitIn(g.dir, "add", "-A");
  gitIn(g.dir, "commit", "-q", "-m", "base: the approved run");
  const base = gitIn(g.dir, "rev-parse", "HEAD");
  return { g, base, head: commitChange(g, change, "the executor's change") };
}

/** Write `change` into the checkout and commit it; the new head. */
function commitChange(g: GateRun, change: Record<string, string>, message: string): string {
  for (const [rel, text] of Object.entries(change)) {
    mkdirSync(path.dirname(path.join(g.dir, rel)), { recursive: true });
    writeFileSync(path.join(g.dir, rel), text);
  }
  gitIn(g.dir, "add", "-A");
  gitIn(g.dir, "commit", "-q", "--allow-empty", "-m", message);
  return gitIn(g.dir, "rev-parse", "HEAD");
}

/** Run the CLI with `dir` as the current folder, as a CI job runs in its checkout. */
async function cliIn(dir: string, argv: string[]): Promise<CliRun> {
  const before = process.cwd();
  process.chdir(dir);
  try {
    return await runCli(argv);
  } finally {
    process.chdir(before);
  }
}

const PLANNED = { "cart/cache.go": "package cart // locked\n", "cart/cache_race_test.go": "package cart\n" };

describe("twinlock verify (CI)", () => {
  it("verifies a change inside the plan's action targets, reading the reviewers from the base commit", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    const summary = path.join(g.dir, "summary.md");
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}..${head}`, "--summary", summary]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toMatch(/^ok {4}receipt {2}MD-29 rev 1 review: signed by alice$/m);
    expect(r.stdout).toMatch(/^ok {4}admission {2}MD-29→MD-30: admitted on the approved and consented hash sha256:/m);
    expect(r.stdout).toMatch(/^ok {4}changed-file {2}cart\/cache\.go: inside the plan of MD-29→MD-30 \(action A2\)$/m);
    expect(r.stdout).toContain(`against the reviewers in ${base}:twinlock.yaml, 2 changed files`);
    expect(readFileSync(summary, "utf8")).toContain("## twinlock verify: verified");
  });

  it("reads the handoff folder's name literally: a folder the agent called ** or * does not put every file inside the plan", async () => {
    for (const name of ["**", "*"]) {
      const { g, base, head } = await repoWithRun(
        { ...PLANNED, ".github/workflows/deploy.yml": "on: push\n", "secrets.env": "x\n" },
        aliceTrustFile(),
        name,
      );
      const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}..${head}`]);
      expect(r.code, `${name}: ${r.output}`).toBe(1);
      expect(r.stdout).toMatch(/^FAIL {2}changed-file {2}\.github\/workflows\/deploy\.yml: deviation/m);
      expect(r.stdout).toMatch(/^FAIL {2}changed-file {2}secrets\.env: deviation/m);
    }
  });

  it("reports a changed file outside the plan as a deviation and exits 1", async () => {
    const { g, base, head } = await repoWithRun({ ...PLANNED, ".github/workflows/deploy.yml": "on: push\n" });
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}..${head}`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL {2}changed-file {2}\.github\/workflows\/deploy\.yml: deviation: outside every admitted action's target/m,
    );
    const list = path.join(g.dir, "changed.txt");
    writeFileSync(list, "cart/cache.go\nsecrets.env\n");
    const j = await cliIn(g.dir, ["verify", "run.json", "--trust", "twinlock.yaml", "--changed-files", list, "--json"]);
    expect(j.code).toBe(1);
    const report = JSON.parse(j.stdout) as { ok: boolean; findings: Array<{ check: string; ok: boolean; subject: string }> };
    expect(report.findings.filter((f) => !f.ok).map((f) => f.subject)).toEqual(["secrets.env"]);
  });

  it("refuses a trust file that the change under test edits, naming the base commit's copy", async () => {
    const { g, base, head } = await repoWithRun({ ...PLANNED, "twinlock.yaml": aliceTrustFile(MALLORY_KEY) }, aliceTrustFile());
    const r = await cliIn(g.dir, ["verify", "run.json", "--trust", "twinlock.yaml", "--git-range", `${base}..${head}`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`the trust file twinlock.yaml in the working tree differs from the base commit's (${base}:twinlock.yaml)`);
  });

  it("fails every receipt when the base branch trusts other reviewers", async () => {
    const { g, base, head } = await repoWithRun(PLANNED, aliceTrustFile(MALLORY_KEY));
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}..${head}`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL {2}receipt {2}MD-29 rev 1 review: .*signed by alice's key|^FAIL {2}receipt {2}MD-29 rev 1 review: the review receipt is signed by an unknown key/m,
    );
  });

  it("fails the chain of a run edited by hand, and takes bad input as one line with exit 2", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    const runFile = path.join(g.dir, "run.json");
    writeFileSync(runFile, readFileSync(runFile, "utf8").replace('"decision": "approved"', '"decision": "declined"'));
    const r = await cliIn(g.dir, ["verify", "run.json", "--trust", "twinlock.yaml"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}chain {2}run: first bad event/m);
    const bad = await cliIn(g.dir, ["verify", "run.json", "--git-range", `--output=x..${head}`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^twinlock: --git-range "--output=x\.\.[0-9a-f]+" is not a range A\.\.\.B \(or A\.\.B\)/);
    expect(base).not.toBe(head);
  });
});

describe("where verify looks for the reviewers when told nothing", () => {
  it("says which twinlock.yaml it looked for by default, and suggests --suite DIR, not a --trust the user never gave", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    rmSync(path.join(g.dir, "twinlock.yaml"));
    const r = await cliIn(g.dir, ["verify", "run.json"]);
    expect(r.code, r.output).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(
      `no twinlock.yaml at ${path.join(g.dir, "twinlock.yaml")}: with no --trust, verify reads the twinlock.yaml of the checkout's top folder; give --suite DIR, the folder that holds the suite's twinlock.yaml (or --trust FILE, the reviewers file)`,
    );
    expect(r.stderr).not.toContain("cannot read --trust");
    // In the base commit too: a default --suite folder that holds none is named with the commit.
    mkdirSync(path.join(g.dir, "prompts"));
    const inSuite = await cliIn(g.dir, ["verify", "run.json", "--suite", "prompts", "--git-range", `${base}...${head}`]);
    expect(inSuite.code, inSuite.output).toBe(2);
    expect(inSuite.stderr).toContain(
      `no twinlock.yaml at ${path.join(g.dir, "prompts", "twinlock.yaml")} in the base commit ${base}: with no --trust, verify reads the twinlock.yaml of --suite prompts;`,
    );
  });

  it("reports a --git-range ref that names no commit as a bad ref, before looking for twinlock.yaml at it", async () => {
    const { g, head } = await repoWithRun(PLANNED);
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `origin/mian...${head}`]);
    expect(r.code, r.output).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`--git-range origin/mian...${head}: origin/mian is not a commit in the repository at ${g.dir}; fix the ref`);
    expect(r.stderr).not.toContain("twinlock.yaml");
  });
});

describe("verify --change: a run passes only the change it was made for", () => {
  it("refuses a run made for no change, saying how to bind one, and refuses a malformed change without reading the run", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    const r = await cliIn(g.dir, ["verify", g.runFile, "--git-range", `${base}...${head}`, "--change", "acme/shop#42"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL {2}change {2}run: made for no change, and this is acme\/shop#42: start the run with `init-run --for-change acme\/shop#42`$/m,
    );
    for (const bad of ["acme/shop", "acme/shop#0", "acme#42", "../x#1", "a/b#1; rm -rf /", `a/b@${"x".repeat(300)}`]) {
      const refused = await cliIn(g.dir, ["verify", g.runFile, "--change", bad]);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr, bad).toMatch(/is not a change; give OWNER\/REPO#NUMBER for a pull request or OWNER\/REPO@BRANCH/);
    }
  });

  it("records the change init-run was given, and init-run refuses one that is not a change", async () => {
    const g = makeGateRun();
    const made = await runCli([
      "init-run",
      g.runFile,
      "--suite",
      g.suite,
      "--planner",
      "MD-29",
      "--for-change",
      "acme/shop@agent/fix-cache",
      "--home",
      g.home,
    ]);
    expect(made.code, made.output).toBe(0);
    expect(made.stdout).toContain("for the change acme/shop@agent/fix-cache: CI refuses this run for any other");
    expect(JSON.parse(readFileSync(g.runFile, "utf8")).state.change).toBe("acme/shop@agent/fix-cache");
    const bad = await runCli([
      "init-run",
      path.join(g.dir, "other.json"),
      "--suite",
      g.suite,
      "--planner",
      "MD-29",
      "--for-change",
      "#42",
      "--home",
      g.home,
    ]);
    expect(bad.code).toBe(2);
  });
});

describe("only the admitted actions scope the change", () => {
  it("fails a change to the target of a planned action the person left out of the consent, in verify and in close", async () => {
    const g = makeGateRun();
    // The person consents to A1 (the race test) only; A2 (cart/cache.go) is planned but not consented to.
    await driveSignedToExecuting(g, { actions: ["A1"] });
    const gateKey = (await ensureGateKey(homeOf(g))).publicKey;
    const trust = path.join(g.dir, "trust.yaml");
    writeFileSync(trust, `${aliceTrustFile()}gate_keys:\n  - name: the-gate\n    public_key: "${gateKey}"\n`);
    const list = path.join(g.dir, "changed.txt");
    writeFileSync(list, "cart/cache.go\ncart/cache_race_test.go\n");
    const r = await cliIn(g.dir, ["verify", g.runFile, "--trust", trust, "--changed-files", list]);
    expect(r.code, r.output).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}changed-file {2}cart\/cache\.go: deviation/m);
    expect(r.stdout).toMatch(/^ok {4}changed-file {2}cart\/cache_race_test\.go: inside the plan/m);
    expect(r.stdout).toMatch(/1 of the plan's 2 actions admitted \(A1\)/);
    const close = await cliIn(g.dir, [
      "close",
      g.runFile,
      "MD-29",
      "--result",
      "verified",
      "--changed-files",
      list,
      "--criterion",
      "V1=passed:go test",
      "--criterion",
      "V2=passed:go test",
      "--home",
      g.home,
    ]);
    expect(close.code, close.output).toBe(1);
    expect(close.stderr).toMatch(/cart\/cache\.go is outside the plan/);
  });
});

describe("what happened after the admission", () => {
  it("fails a run a person stopped after admitting it, and one closed failed, naming each", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    const ok = await cliIn(g.dir, ["verify", g.runFile, "--git-range", `${base}...${head}`]);
    expect(ok.code, ok.output).toBe(0);
    expect(ok.stdout).toMatch(/^ok {4}outcome {2}MD-29→MD-30: executing, no stop open$/m);
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "bad-change", actor: "alice" });
    const stopped = await cliIn(g.dir, ["verify", g.runFile, "--git-range", `${base}...${head}`]);
    expect(stopped.code).toBe(1);
    expect(stopped.stdout).toMatch(/^FAIL {2}outcome {2}MD-29→MD-30: stopped: bad-change on the whole run$/m);
  });

  it("fails a run closed failed after execution", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    await closeWorkflow({
      store: storeOf(g),
      run: g.runFile,
      planner: "MD-29",
      result: "failed",
      residual: "tests failed",
      actor: "alice",
    });
    const r = await cliIn(g.dir, ["verify", g.runFile, "--git-range", `${base}...${head}`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}outcome {2}MD-29→MD-30: closed failed/m);
  });
});

describe("the head a verified close did not cover", () => {
  /** A person closes MD-29 verified on the change base...head, both criteria passed. */
  const closeVerified = (g: { dir: string; home: string }, base: string, head: string) =>
    cliIn(g.dir, [
      "close",
      "run.json",
      "MD-29",
      "--result",
      "verified",
      "--git-range",
      `${base}...${head}`,
      "--criterion",
      "V1=passed:go test",
      "--criterion",
      "V2=passed:go test -race",
      "--key",
      aliceKeyFile(g.home),
      "--actor",
      "alice",
      "--home",
      g.home,
    ]);

  it("passes the head a person closed verified, and fails a head the agent pushed after the close, naming each file that changed since", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    const close = await closeVerified(g, base, head);
    expect(close.code, close.output).toBe(0);
    const same = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${head}`]);
    expect(same.code, same.output).toBe(0);
    expect(same.stdout).toMatch(
      /^ok {4}verified-change {2}MD-29→MD-30: the change under test is the one closed verified \(2 files, the same digests and modes\)$/m,
    );
    // After the verified close the agent pushes one more commit, still inside the plan's targets (attack: verified work swapped).
    writeFileSync(path.join(g.dir, "cart/cache.go"), "package cart // unlocked again\n");
    writeFileSync(path.join(g.dir, "cart/cache_extra_test.go"), "package cart\n");
    gitIn(g.dir, "add", "cart");
    gitIn(g.dir, "commit", "-q", "-m", "after the close");
    const later = gitIn(g.dir, "rev-parse", "HEAD");
    const moved = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${later}`]);
    expect(moved.code, moved.output).toBe(1);
    expect(moved.stdout).toMatch(
      /^FAIL {2}verified-change {2}MD-29→MD-30: the change under test is not the one closed verified: cart\/cache\.go \(sha256:[0-9a-f]{12}… when verified, now sha256:[0-9a-f]{12}…\);.*a closed pair is not closed again: push only what was verified, or start a new run for the new change$/m,
    );
    // A new file outside this pair's targets is no pair's to have verified: the changed-file check names it.
    expect(moved.stdout).toMatch(/^FAIL {2}changed-file {2}cart\/cache_extra_test\.go: deviation/m);
    // A change that drops a verified file is not the verified change either.
    const fewer = await cliIn(g.dir, ["verify", "run.json", "--changed-files", "/dev/null"]);
    expect(fewer.stdout).toMatch(/cart\/cache\.go \(in the verified change, not in this one\)/);
  });

  it("fails a head that after the verified close adds a file outside every target, naming it as one the close never saw", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    const close = await closeVerified(g, base, head);
    expect(close.code, close.output).toBe(0);
    const later = commitChange(g, { "deploy/prod.yml": "replicas: 0\n" }, "after the close");
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${later}`]);
    expect(r.code, r.output).toBe(1);
    expect(r.stdout).not.toMatch(/^ok {4}verified-change/m);
    expect(r.stdout).toMatch(
      /^FAIL {2}verified-change {2}MD-29→MD-30: the change under test is not the one closed verified: deploy\/prod\.yml \(not in the verified change: the close never saw it\);/m,
    );
  });

  it("fails a head that after the verified close only repoints a gitlink, swaps a file for a symlink of the same bytes, or sets +x", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    const close = await closeVerified(g, base, head);
    expect(close.code, close.output).toBe(0);
    const later = (commit: () => void) => {
      commit();
      gitIn(g.dir, "commit", "-q", "-m", "after the close");
      return gitIn(g.dir, "rev-parse", "HEAD");
    };
    // Attack: +x on a verified file, the bytes unchanged.
    const chmodded = later(() => gitIn(g.dir, "update-index", "--chmod=+x", "cart/cache_race_test.go"));
    const x = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${chmodded}`]);
    expect(x.code, x.output).toBe(1);
    expect(x.stdout).toMatch(
      /cart\/cache_race_test\.go \(sha256:[0-9a-f]{12}… when verified, now sha256:[0-9a-f]{12}… an executable file\)/,
    );
    // Attack: the verified file becomes a symlink whose target text is its old bytes.
    const link = later(() => {
      const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: g.dir, input: PLANNED["cart/cache.go"] }).toString().trim();
      gitIn(g.dir, "update-index", "--cacheinfo", `120000,${blob},cart/cache.go`);
    });
    const l = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${link}`]);
    expect(l.code, l.output).toBe(1);
    expect(l.stdout).toMatch(/cart\/cache\.go \(sha256:[0-9a-f]{12}… when verified, now sha256:[0-9a-f]{12}… a symlink\)/);
    // Attack: the file becomes a submodule pointer, then is repointed: each pointer is its own digest, and never passes as a file.
    const pointer = later(() => gitIn(g.dir, "update-index", "--cacheinfo", `160000,${base},cart/cache.go`));
    const p = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${pointer}`]);
    expect(p.code, p.output).toBe(1);
    expect(p.stdout).toMatch(/now sha256:[0-9a-f]{12}… a submodule pointer, not a file\)/);
    expect(p.stdout).toMatch(/^FAIL {2}changed-file {2}cart\/cache\.go: deviation: a submodule pointer, not a file/m);
  });

  it("adds no such finding for a pair still executing or closed without a recorded change", async () => {
    const { g, base, head } = await repoWithRun(PLANNED);
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${head}`]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).not.toContain("verified-change");
  });
});

/**
 * A run of two pairs in one suite, both admitted on alice's signed review and
 * consent: MD-27 → MD-28 (a performance plan: A1 a benchmark, A2 everything
 * under perf/) with its handoff in handoff-perf/, and MD-29 → MD-30 (the
 * cart race fix). `change` is the executors' commit on top.
 */
async function repoWithTwoPairs(change: Record<string, string>): Promise<{ g: GateRun; base: string; head: string }> {
  const g = makeGateRun();
  const records = demoHandoffRecords();
  const [bench, pool] = records.actions.actions;
  if (!bench || !pool) throw new Error("the demo plan has two actions");
  bench.target = "perf/pool_bench_test.go";
  pool.target = "perf/";
  const perfHandoff = path.join(g.dir, "handoff-perf");
  writeDemoHandoff(perfHandoff, records);
  await startRun(g, { planners: ["MD-27", "MD-29"] });
  await driveSignedPairToExecuting(g, { planner: "MD-27", executor: "MD-28", handoff: perfHandoff });
  await driveSignedPairToExecuting(g, { planner: "MD-29", executor: "MD-30" });
  return commitRunAndChange(g, aliceTrustFile(), change);
}

const PERF = { "perf/pool.go": "package perf // pooled\n", "perf/pool_bench_test.go": "package perf\n" };

describe("a run of two pairs", () => {
  it("passes a change to both pairs' targets, each file named with the pair and the action whose consent covers it", async () => {
    const { g, base, head } = await repoWithTwoPairs({ ...PLANNED, ...PERF });
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${head}`]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toMatch(/^ok {4}admission {2}MD-27→MD-28: admitted on the approved and consented hash/m);
    expect(r.stdout).toMatch(/^ok {4}admission {2}MD-29→MD-30: admitted on the approved and consented hash/m);
    expect(r.stdout).toMatch(/^ok {4}changed-file {2}cart\/cache\.go: inside the plan of MD-29→MD-30 \(action A2\)$/m);
    expect(r.stdout).toMatch(/^ok {4}changed-file {2}perf\/pool\.go: inside the plan of MD-27→MD-28 \(action A2\)$/m);
    expect(r.stdout).toMatch(/^ok {4}changed-file {2}perf\/pool_bench_test\.go: inside the plan of MD-27→MD-28 \(actions A1, A2\)$/m);
    expect(r.stdout).toContain("4 changed files");
  });

  it("fails a file of neither pair as a deviation, whatever both pairs admitted", async () => {
    const { g, base, head } = await repoWithTwoPairs({ ...PLANNED, ...PERF, "deploy/prod.yml": "replicas: 0\n" });
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${head}`]);
    expect(r.code, r.output).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL {2}changed-file {2}deploy\/prod\.yml: deviation: outside every admitted action's target and the run's own records$/m,
    );
    expect(r.stdout.match(/^FAIL/gm)).toHaveLength(1);
  });

  it("fails a change inside one pair's targets made after that pair closed verified, while only the other still runs, naming the closed pair", async () => {
    const { g, base, head } = await repoWithTwoPairs({ ...PLANNED, ...PERF });
    const list = path.join(g.dir, "perf-changed.txt");
    writeFileSync(list, Object.keys(PERF).join("\n"));
    const close = await cliIn(g.dir, [
      "close",
      "run.json",
      "MD-27",
      "--result",
      "verified",
      "--changed-files",
      list,
      "--criterion",
      "V1=passed:go test",
      "--criterion",
      "V2=passed:go test -race",
      "--key",
      aliceKeyFile(g.home),
      "--actor",
      "alice",
      "--home",
      g.home,
    ]);
    expect(close.code, close.output).toBe(0);
    const closed = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${head}`]);
    expect(closed.code, closed.output).toBe(0);
    // Under MD-29 → MD-30's session, a new file under perf/: MD-27's target, whose pair no longer runs.
    const later = commitChange(
      g,
      { "perf/extra.go": "package perf // after the close\n", "cart/cache.go": "package cart // v2\n" },
      "later",
    );
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${later}`]);
    expect(r.code, r.output).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL {2}changed-file {2}perf\/extra\.go: deviation: inside the target of MD-27→MD-28 \(action A2\), which closed verified without it: no running consent covers it$/m,
    );
    expect(r.stdout).toMatch(
      /^FAIL {2}verified-change {2}MD-27→MD-28: .*perf\/extra\.go \(not in the verified change: the close never saw it\)/m,
    );
    // The running pair's own file, changed again, is still its work.
    expect(r.stdout).toMatch(/^ok {4}changed-file {2}cart\/cache\.go: inside the plan of MD-29→MD-30 \(action A2\)$/m);
  });

  it("fails a change inside the targets of a pair a person stopped, naming that pair and its stop, while the other pair's files pass", async () => {
    const { g, base, head } = await repoWithTwoPairs({ ...PLANNED, ...PERF });
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "perf-regression", workflow: "MD-27", actor: "alice" });
    const r = await cliIn(g.dir, ["verify", "run.json", "--git-range", `${base}...${head}`]);
    expect(r.code, r.output).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}outcome {2}MD-27→MD-28: stopped: perf-regression$/m);
    expect(r.stdout).toMatch(
      /^FAIL {2}changed-file {2}perf\/pool\.go: deviation: inside the target of MD-27→MD-28 \(action A2\), which covers nothing now \(stopped: perf-regression\)$/m,
    );
    expect(r.stdout).toMatch(/^ok {4}outcome {2}MD-29→MD-30: executing, no stop open$/m);
    expect(r.stdout).toMatch(/^ok {4}changed-file {2}cart\/cache\.go: inside the plan of MD-29→MD-30/m);
  });
});
