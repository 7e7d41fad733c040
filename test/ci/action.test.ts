/**
 * The repository's composite action (action.yml), its own shell lines run as
 * a runner would run them: each step's `env:` expressions evaluated against
 * the event, its `if:` honoured, its outputs read from GITHUB_OUTPUT, in a git
 * repository holding the approved run on the base commit and the agent's
 * change on the head.
 */

import { execFileSync, spawn } from "node:child_process";
import { createPrivateKey } from "node:crypto";
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import { raiseStop } from "../../src/gate/hard-stops.js";
import { createAgentToken } from "../../src/server/agent-tokens.js";
import { startGateServer } from "../../src/server/start-gate-server.js";
import {
  type GateRun,
  homeOf,
  makeGateRun,
  makeRunTempDir,
  PLANNER,
  removeGateRuns,
  storeOf,
  TEST_PINNER,
} from "../../src/test-support/run-fixture.js";
import { ALICE_KEY, aliceTrustFile, driveSignedToExecuting } from "../../src/test-support/signed-run.js";
import { ensureGateKey } from "../../src/trust/gate-key.js";
import { generateReviewerKey, publicKeyLine } from "../../src/trust/keys.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";
import { writeStandInGh } from "../support/stand-in-gh.js";

/** The gate servers the tests started, closed after them. */
const servers: { close(): Promise<void> }[] = [];

beforeAll(ensureBuilt, 240_000);
afterAll(async () => {
  for (const s of servers) await s.close();
  removeGateRuns();
});

interface Step {
  name?: string;
  id?: string;
  if?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
}

const action = parse(readFileSync(path.join(REPO_ROOT, "action.yml"), "utf8")) as {
  inputs: Record<string, { default?: string }>;
  runs: { steps: Step[] };
};
const steps = action.runs.steps;
const changeStep = steps.find((s) => s.id === "change") as Step;
const exportStep = steps.find((s) => s.name === "the gate's export of the run") as Step;
const verifyStep = steps.find((s) => s.run?.includes("twinlock verify")) as Step;

/** The repository the events come from. */
const REPOSITORY = "acme/shop";

/** A GitHub event as the expressions read it: `github.event_name`, `github.event.…`. */
interface GithubEvent {
  name: string;
  payload: Record<string, unknown>;
}

type Context = Record<string, unknown>;

const lookup = (ctx: Context, dotted: string): unknown =>
  dotted.split(".").reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), ctx);

/** One expression of the forms action.yml uses: `a.b || c.d`, `a.b == 'x'`, a context path. */
function evaluate(ctx: Context, expr: string): string {
  const eq = /^(.+?)\s*==\s*'([^']*)'$/.exec(expr.trim());
  if (eq) return String(evaluate(ctx, eq[1] as string) === eq[2]);
  for (const part of expr.split("||")) {
    const v = lookup(ctx, part.trim());
    if (v !== undefined && v !== null && v !== "") return String(v);
  }
  return "";
}

/** A string with `${{ … }}` expressions replaced as the runner does. */
const interpolate = (ctx: Context, s: string): string => s.replace(/\$\{\{([^}]*)\}\}/g, (_, e: string) => evaluate(ctx, e));

/**
 * The action's steps that have a shell line (setup and install skipped: `twinlock` on PATH is the built CLI),
 * from the first up to and including the verify step, with `with` as the workflow's `with:` gives the inputs.
 */
async function runAction(
  repo: string,
  event: GithubEvent,
  opts: { with?: Record<string, string>; only?: Step[]; gh?: Record<string, string> } = {},
): Promise<{ status: number | null; log: string; outputs: Record<string, Record<string, string>>; ran: string[]; ghCalls: string }> {
  const bin = makeRunTempDir("twinlock-action-");
  writeFileSync(path.join(bin, "twinlock"), `#!/bin/sh\nexec "${process.execPath}" "${DIST_BIN}" "$@"\n`);
  chmodSync(path.join(bin, "twinlock"), 0o755);
  // A stand-in `gh` answering the pulls API from `opts.gh` (number → author login) and logging its calls.
  const ghLog = writeStandInGh(bin, REPOSITORY, opts.gh ?? {});
  const summary = path.join(bin, "step-summary.md");
  writeFileSync(summary, "");
  const github = { event_name: event.name, event: event.payload, repository: REPOSITORY, token: "ghs_test" };
  const inputs: Record<string, string> = {};
  for (const [k, def] of Object.entries(action.inputs)) inputs[k] = opts.with?.[k] ?? interpolate({ github }, String(def.default ?? ""));
  const outputs: Record<string, Record<string, string>> = {};
  const ctx = (): Context => ({
    github,
    inputs,
    steps: Object.fromEntries(Object.entries(outputs).map(([id, o]) => [id, { outputs: o }])),
  });
  let log = "";
  const ran: string[] = [];
  for (const step of opts.only ?? [changeStep, exportStep, verifyStep]) {
    if (step.if && evaluate(ctx(), step.if.replace(/^\$\{\{|\}\}$/g, "")) !== "true") continue;
    const outFile = path.join(bin, `output-${ran.length}`);
    writeFileSync(outFile, "");
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = interpolate(ctx(), v);
    // As the runner starts a `shell: bash` step: `bash --noprofile --norc -eo pipefail`, stdin not a socket.
    // Not spawnSync: the gate server answers the export step from this process's event loop.
    const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run as string], {
        cwd: repo,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          PATH: `${bin}:${process.env.PATH}`,
          HOME: process.env.HOME ?? "/tmp",
          GITHUB_OUTPUT: outFile,
          GITHUB_STEP_SUMMARY: summary,
          GITHUB_REPOSITORY: REPOSITORY,
          ...env,
        },
      });
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
      child.once("error", reject);
      child.once("close", (status) => resolve({ status, stdout, stderr }));
    });
    ran.push(step.name ?? step.id ?? "");
    log += r.stdout + r.stderr;
    if (step.id)
      outputs[step.id] = Object.fromEntries(
        readFileSync(outFile, "utf8")
          .split("\n")
          .filter((l) => l.includes("="))
          .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
      );
    if (r.status !== 0) return { status: r.status, log, outputs, ran, ghCalls: readFileSync(ghLog, "utf8") };
  }
  return { status: 0, log, outputs, ran, ghCalls: readFileSync(ghLog, "utf8") };
}

const gitIn = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir })
    .toString()
    .trim();

/** A gate server for `g`'s store and a CI token for it: the action's `server` and `ci-token` inputs. */
async function gateServerFor(g: GateRun): Promise<{ server: string; "ci-token": string }> {
  const { token } = await createAgentToken(homeOf(g), { agent: "ci", runId: "*", scopes: ["export"] });
  const server = await startGateServer({ store: storeOf(g), listen: "127.0.0.1:0" });
  servers.push(server);
  return { server: `http://127.0.0.1:${server.port}`, "ci-token": token };
}

/**
 * A git repository: the base commit holds the agent's copy of an executing run made for `change` (taken at
 * admission), its handoff and the trust file; the head adds the planned file. `gate` is the server inputs.
 */
async function repoWithRunFor(
  change: string,
  o: { trust?: (g: GateRun, repo: string) => Promise<void> } = {},
): Promise<{ g: GateRun; repo: string; base: string; head: string; gate: { server: string; "ci-token": string } }> {
  const g = makeGateRun({ copySuite: o.trust !== undefined });
  // A trust export names the reviewers of the suite as the gate home pinned it: alice, in the suite's own file.
  if (o.trust) {
    const file = path.join(g.suite, "twinlock.yaml");
    const doc = parseDocument(readFileSync(file, "utf8"));
    doc.set("reviewers", [{ name: "alice", public_key: publicKeyLine(ALICE_KEY), rights: ["review", "consent", "apply", "verify"] }]);
    writeFileSync(file, doc.toString());
  }
  await driveSignedToExecuting(g, { change });
  const repo = makeRunTempDir("twinlock-action-repo-");
  mkdirSync(path.join(repo, "twinlock"), { recursive: true });
  cpSync(g.runFile, path.join(repo, "twinlock/run.json"));
  cpSync(g.handoff, path.join(repo, "twinlock/handoff"), { recursive: true });
  if (o.trust) await o.trust(g, repo);
  else writeFileSync(path.join(repo, "twinlock.yaml"), aliceTrustFile(ALICE_KEY, [(await ensureGateKey(homeOf(g))).publicKey]));
  gitIn(repo, "init", "-q", "-b", "main");
  gitIn(repo, "add", "-A");
  gitIn(repo, "commit", "-q", "-m", "base");
  const base = gitIn(repo, "rev-parse", "HEAD");
  mkdirSync(path.join(repo, "cart"));
  writeFileSync(path.join(repo, "cart/cache.go"), "package cart\n");
  gitIn(repo, "add", "-A");
  gitIn(repo, "commit", "-q", "-m", "the planned change");
  return { g, repo, base, head: gitIn(repo, "rev-parse", "HEAD"), gate: await gateServerFor(g) };
}

const pullRequest = (number: number, base: string, head: string, author = "my-agent[bot]", baseRef = "main"): GithubEvent => ({
  name: "pull_request",
  payload: {
    pull_request: { number, user: { login: author }, base: { sha: base, ref: baseRef }, head: { sha: head } },
    repository: { default_branch: "main" },
  },
});

const queueRef = (n: string) => `refs/heads/gh-readonly-queue/main/pr-${n}-0123456789abcdef0123456789abcdef01234567`;
const mergeGroup = (n: string, base: string, head: string): GithubEvent => ({
  name: "merge_group",
  payload: { merge_group: { head_ref: queueRef(n), base_sha: base, head_sha: head } },
});

describe("action.yml", () => {
  it("passes a pull request's run made for that pull request, and refuses it on another pull request", async () => {
    const { repo, base, head, gate } = await repoWithRunFor("acme/shop#42");
    const ok = await runAction(repo, pullRequest(42, base, head), { with: { run: "twinlock/run.json", ...gate } });
    expect(ok.status, ok.log).toBe(0);
    expect(ok.outputs.change).toEqual({ agent: "true", change: "acme/shop#42" });
    expect(ok.log).toMatch(/^ok {4}change {2}run: made for acme\/shop#42$/m);
    const other = await runAction(repo, pullRequest(43, base, head), { with: { run: "twinlock/run.json", ...gate } });
    expect(other.status).toBe(1);
    expect(other.log).toMatch(/^FAIL {2}change {2}run: made for acme\/shop#42, not acme\/shop#43/m);
  });

  it("fails the agent's pull request onto a branch other than the protected one, whose twinlock.yaml the agent may have written", async () => {
    const { repo, base, head, gate } = await repoWithRunFor("acme/shop#42");
    const own = await runAction(repo, pullRequest(42, base, head, "my-agent[bot]", "agent-trust"), {
      with: { run: "twinlock/run.json", ...gate },
    });
    expect(own.status).toBe(1);
    expect(own.log).toContain("an agent's pull request must target main (the protected branch its trust is read from), not agent-trust");
    expect(own.log).not.toMatch(/^ok /m);
  });

  it("in the merge queue verifies the run against the queued pull request, read from the queue's branch", async () => {
    const { repo, base, head, gate } = await repoWithRunFor("acme/shop#42");
    const queued = await runAction(repo, mergeGroup("42", base, head), { with: { run: "twinlock/run.json", ...gate } });
    expect(queued.status, queued.log).toBe(0);
    expect(queued.outputs.change?.change).toBe("acme/shop#42");
    const another = await runAction(repo, mergeGroup("43", base, head), { with: { run: "twinlock/run.json", ...gate } });
    expect(another.status).toBe(1);
    expect(another.log).toMatch(/made for acme\/shop#42, not acme\/shop#43/);
  });

  it("refuses an event that names no pull request unless the change input names it", async () => {
    const { repo, base, head, gate } = await repoWithRunFor("acme/shop#42");
    const push: GithubEvent = { name: "push", payload: {} };
    const refused = await runAction(repo, push, { with: { run: "twinlock/run.json", base, head, ...gate } });
    expect(refused.status).not.toBe(0);
    expect(refused.ran).toEqual(["the change under test"]);
    expect(refused.log).toContain("give the action's change input");
    const named = await runAction(repo, push, { with: { run: "twinlock/run.json", base, head, change: "acme/shop#42", ...gate } });
    expect(named.status, named.log).toBe(0);
    const bad = await runAction(repo, mergeGroup("x", base, head), { with: { run: "twinlock/run.json", ...gate } });
    expect(bad.status).not.toBe(0);
    expect(bad.ran).toEqual(["the change under test"]);
  });

  it("with agent-login, skips every later step for a person's pull request, in both events, and verifies the agent's", async () => {
    const { repo, base, head, gate } = await repoWithRunFor("acme/shop#42");
    const withAgent = { run: "twinlock/run.json", "agent-login": "my-agent[bot]", ...gate };
    const persons = await runAction(repo, pullRequest(7, base, head, "alice"), { with: withAgent, only: steps });
    expect(persons).toMatchObject({ status: 0, ran: ["the change under test"], ghCalls: "" });
    expect(persons.outputs.change).toEqual({ agent: "false", change: "acme/shop#7" });
    const queuedPersons = await runAction(repo, mergeGroup("7", base, head), { with: withAgent, only: steps, gh: { "7": "alice" } });
    expect(queuedPersons).toMatchObject({ status: 0, ran: ["the change under test"] });
    expect(queuedPersons.ghCalls).toBe("api repos/acme/shop/pulls/7 --jq .user.login\n");
    const agents = await runAction(repo, mergeGroup("42", base, head), { with: withAgent, gh: { "42": "my-agent[bot]" } });
    expect(agents.status, agents.log).toBe(0);
    expect(agents.ran).toEqual(["the change under test", "the gate's export of the run", "twinlock verify"]);
    // The API cannot say who wrote the queued pull request: the check fails rather than skip.
    const unknown = await runAction(repo, mergeGroup("99", base, head), { with: withAgent, only: steps });
    expect(unknown.status).not.toBe(0);
  });

  it("fails the agent's change when a person raised a stop after the agent committed its copy of the run", async () => {
    const { g, repo, base, head, gate } = await repoWithRunFor("acme/shop#42");
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "stop-now", workflow: PLANNER, actor: "operator" });
    const r = await runAction(repo, pullRequest(42, base, head), { with: { run: "twinlock/run.json", ...gate } });
    expect(r.ran).toEqual(["the change under test", "the gate's export of the run", "twinlock verify"]);
    expect(r.status, r.log).not.toBe(0);
    expect(r.log).toMatch(/^FAIL .*stop/m);
  });

  it("fails an export the gate key pinned in the trust file did not sign", async () => {
    const otherGate = publicKeyLine(createPrivateKey(generateReviewerKey().privatePem));
    const pinsAnother = async (_g: GateRun, repo: string) => {
      writeFileSync(path.join(repo, "twinlock.yaml"), aliceTrustFile(ALICE_KEY, [otherGate]));
    };
    const { repo, base, head, gate } = await repoWithRunFor("acme/shop#42", { trust: pinsAnother });
    const r = await runAction(repo, pullRequest(42, base, head), { with: { run: "twinlock/run.json", ...gate } });
    expect(r.status).not.toBe(0);
    expect(r.log).toMatch(/^FAIL {2}gate /m);
  });

  it("passes a run whose reviewers come from a pinner-signed trust export, given the pinner-key input", async () => {
    const pinned = async (g: GateRun, repo: string) => {
      const keys = makeRunTempDir("twinlock-action-keys-");
      const pinnerKey = path.join(keys, "pinner.key");
      writeFileSync(pinnerKey, TEST_PINNER.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
      writeFileSync(path.join(repo, "twinlock-pinner.pub"), `${publicKeyLine(TEST_PINNER)}\n`);
      const suiteId = JSON.parse(readFileSync(g.runFile, "utf8")).state.suite.suite_id as string;
      execFileSync(
        process.execPath,
        [DIST_BIN, "trust", "export", "--out", "twinlock-trust.json", "--key", pinnerKey, "--home", g.home, "--suite-id", suiteId],
        {
          cwd: repo,
          env: { ...process.env, TWINLOCK_KEY: "", TWINLOCK_STORE: "" },
          stdio: "pipe",
        },
      );
    };
    const { repo, base, head, gate } = await repoWithRunFor("acme/shop#42", { trust: pinned });
    const inputs = { run: "twinlock/run.json", trust: "twinlock-trust.json", ...gate };
    const ok = await runAction(repo, pullRequest(42, base, head), { with: { ...inputs, "pinner-key": "twinlock-pinner.pub" } });
    expect(ok.status, ok.log).toBe(0);
    const unpinned = await runAction(repo, pullRequest(42, base, head), { with: inputs });
    expect(unpinned.status).not.toBe(0);
  });

  it("fails with one line saying what to set when no gate server is given, never verifying the agent's copy", async () => {
    const { repo, base, head, gate } = await repoWithRunFor("acme/shop#42");
    for (const missing of [{}, { server: gate.server }, { "ci-token": gate["ci-token"] }]) {
      const r = await runAction(repo, pullRequest(42, base, head), { with: { run: "twinlock/run.json", ...missing } });
      expect(r.status).toBe(1);
      expect(r.ran).toEqual(["the change under test", "the gate's export of the run"]);
      const errors = r.log.split("\n").filter((l) => l.startsWith("::error::"));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/set the action's server input .* and ci-token input/);
    }
  });

  it("runs every step after the change under test only for the agent's change", () => {
    expect(steps[0]).toBe(changeStep);
    for (const s of steps.slice(1)) expect(s.if, s.name ?? s.uses).toBe("steps.change.outputs.agent == 'true'");
    expect(verifyStep.run).toContain('--change "$CHANGE"');
    expect(steps.indexOf(exportStep)).toBe(steps.indexOf(verifyStep) - 1);
  });
});
