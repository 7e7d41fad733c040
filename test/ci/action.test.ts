/**
 * The repository's composite action (action.yml), its own shell lines run as
 * a runner would run them: each step's `env:` expressions evaluated against
 * the event, its `if:` honoured, its outputs read from GITHUB_OUTPUT, in a git
 * repository holding the approved run on the base commit and the agent's
 * change on the head.
 */

import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { homeOf, makeGateRun, makeRunTempDir, removeGateRuns } from "../../src/test-support/run-fixture.js";
import { ALICE_KEY, aliceTrustFile, driveSignedToExecuting } from "../../src/test-support/signed-run.js";
import { ensureGateKey } from "../../src/trust/gate-key.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";
import { writeStandInGh } from "../support/stand-in-gh.js";

beforeAll(ensureBuilt, 240_000);
afterAll(removeGateRuns);

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
function runAction(
  repo: string,
  event: GithubEvent,
  opts: { with?: Record<string, string>; only?: Step[]; gh?: Record<string, string> } = {},
): { status: number | null; log: string; outputs: Record<string, Record<string, string>>; ran: string[]; ghCalls: string } {
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
  for (const step of opts.only ?? [changeStep, verifyStep]) {
    if (step.if && evaluate(ctx(), step.if.replace(/^\$\{\{|\}\}$/g, "")) !== "true") continue;
    const outFile = path.join(bin, `output-${ran.length}`);
    writeFileSync(outFile, "");
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = interpolate(ctx(), v);
    // As the runner starts a `shell: bash` step: `bash --noprofile --norc -eo pipefail`, stdin not a socket.
    const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run as string], {
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
      encoding: "utf8",
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

/** A git repository: the base commit holds an executing run made for `change`, its handoff and the trust file; the head adds the planned file. */
async function repoWithRunFor(change: string): Promise<{ repo: string; base: string; head: string }> {
  const g = makeGateRun();
  await driveSignedToExecuting(g, { change });
  const repo = makeRunTempDir("twinlock-action-repo-");
  mkdirSync(path.join(repo, "twinlock"), { recursive: true });
  cpSync(g.runFile, path.join(repo, "twinlock/run.json"));
  cpSync(g.handoff, path.join(repo, "twinlock/handoff"), { recursive: true });
  writeFileSync(path.join(repo, "twinlock.yaml"), aliceTrustFile(ALICE_KEY, [(await ensureGateKey(homeOf(g))).publicKey]));
  gitIn(repo, "init", "-q", "-b", "main");
  gitIn(repo, "add", "-A");
  gitIn(repo, "commit", "-q", "-m", "base");
  const base = gitIn(repo, "rev-parse", "HEAD");
  mkdirSync(path.join(repo, "cart"));
  writeFileSync(path.join(repo, "cart/cache.go"), "package cart\n");
  gitIn(repo, "add", "-A");
  gitIn(repo, "commit", "-q", "-m", "the planned change");
  return { repo, base, head: gitIn(repo, "rev-parse", "HEAD") };
}

const pullRequest = (number: number, base: string, head: string, author = "my-agent[bot]"): GithubEvent => ({
  name: "pull_request",
  payload: { pull_request: { number, user: { login: author }, base: { sha: base }, head: { sha: head } } },
});

const queueRef = (n: string) => `refs/heads/gh-readonly-queue/main/pr-${n}-0123456789abcdef0123456789abcdef01234567`;
const mergeGroup = (n: string, base: string, head: string): GithubEvent => ({
  name: "merge_group",
  payload: { merge_group: { head_ref: queueRef(n), base_sha: base, head_sha: head } },
});

describe("action.yml", () => {
  it("passes a pull request's run made for that pull request, and refuses it on another pull request", async () => {
    const { repo, base, head } = await repoWithRunFor("acme/shop#42");
    const ok = runAction(repo, pullRequest(42, base, head), { with: { run: "twinlock/run.json" } });
    expect(ok.status, ok.log).toBe(0);
    expect(ok.outputs.change).toEqual({ agent: "true", change: "acme/shop#42" });
    expect(ok.log).toMatch(/^ok {4}change {2}run: made for acme\/shop#42$/m);
    const other = runAction(repo, pullRequest(43, base, head), { with: { run: "twinlock/run.json" } });
    expect(other.status).toBe(1);
    expect(other.log).toMatch(/^FAIL {2}change {2}run: made for acme\/shop#42, not acme\/shop#43/m);
  });

  it("in the merge queue verifies the run against the queued pull request, read from the queue's branch", async () => {
    const { repo, base, head } = await repoWithRunFor("acme/shop#42");
    const queued = runAction(repo, mergeGroup("42", base, head), { with: { run: "twinlock/run.json" } });
    expect(queued.status, queued.log).toBe(0);
    expect(queued.outputs.change?.change).toBe("acme/shop#42");
    const another = runAction(repo, mergeGroup("43", base, head), { with: { run: "twinlock/run.json" } });
    expect(another.status).toBe(1);
    expect(another.log).toMatch(/made for acme\/shop#42, not acme\/shop#43/);
  });

  it("refuses an event that names no pull request unless the change input names it", async () => {
    const { repo, base, head } = await repoWithRunFor("acme/shop#42");
    const push: GithubEvent = { name: "push", payload: {} };
    const refused = runAction(repo, push, { with: { run: "twinlock/run.json", base, head } });
    expect(refused.status).not.toBe(0);
    expect(refused.ran).toEqual(["the change under test"]);
    expect(refused.log).toContain("give the action's change input");
    const named = runAction(repo, push, { with: { run: "twinlock/run.json", base, head, change: "acme/shop#42" } });
    expect(named.status, named.log).toBe(0);
    const bad = runAction(repo, mergeGroup("x", base, head), { with: { run: "twinlock/run.json" } });
    expect(bad.status).not.toBe(0);
    expect(bad.ran).toEqual(["the change under test"]);
  });

  it("with agent-login, skips every later step for a person's pull request, in both events, and verifies the agent's", async () => {
    const { repo, base, head } = await repoWithRunFor("acme/shop#42");
    const withAgent = { run: "twinlock/run.json", "agent-login": "my-agent[bot]" };
    const persons = runAction(repo, pullRequest(7, base, head, "alice"), { with: withAgent, only: steps });
    expect(persons).toMatchObject({ status: 0, ran: ["the change under test"], ghCalls: "" });
    expect(persons.outputs.change).toEqual({ agent: "false", change: "acme/shop#7" });
    const queuedPersons = runAction(repo, mergeGroup("7", base, head), { with: withAgent, only: steps, gh: { "7": "alice" } });
    expect(queuedPersons).toMatchObject({ status: 0, ran: ["the change under test"] });
    expect(queuedPersons.ghCalls).toBe("api repos/acme/shop/pulls/7 --jq .user.login\n");
    const agents = runAction(repo, mergeGroup("42", base, head), { with: withAgent, gh: { "42": "my-agent[bot]" } });
    expect(agents.status, agents.log).toBe(0);
    expect(agents.ran).toEqual(["the change under test", "twinlock verify"]);
    // The API cannot say who wrote the queued pull request: the check fails rather than skip.
    const unknown = runAction(repo, mergeGroup("99", base, head), { with: withAgent, only: steps });
    expect(unknown.status).not.toBe(0);
  });

  it("runs every step after the change under test only for the agent's change", () => {
    expect(steps[0]).toBe(changeStep);
    for (const s of steps.slice(1)) expect(s.if, s.name ?? s.uses).toBe("steps.change.outputs.agent == 'true'");
    expect(verifyStep.run).toContain('--change "$CHANGE"');
  });
});
