/**
 * `serve --github-app`: the GitHub check run rides on the notification
 * outbox as a channel, against a local stand-in of GitHub's REST endpoints
 * (src/test-support/github-fake.ts) that records every request.
 */
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { admit } from "../../src/gate/admit.js";
import { closeWorkflow } from "../../src/gate/close-workflow.js";
import { type DeliveryChannel, startNotifier } from "../../src/gate/deliver-notifications.js";
import { raiseStop } from "../../src/gate/hard-stops.js";
import { signAppJwt } from "../../src/github/app-jwt.js";
import { checkRunOf } from "../../src/github/check-run-of.js";
import { ensureCheckWebhook, parseApiBase, parseGitHubAppFlags } from "../../src/github/github-app-options.js";
import { type GitHubAppConfig, gitHubCheckChannel } from "../../src/github/github-check-channel.js";
import type { Notification } from "../../src/notify/notification-kinds.js";
import type { RunState } from "../../src/run/run-schema.js";
import { createAgentToken } from "../../src/server/agent-tokens.js";
import {
  apiOf,
  call,
  decide,
  editReport,
  hashNow,
  PLANNER,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
  TEST_ORIGIN,
  workflowNow,
} from "../../src/test-support/gate-server-fixture.js";
import { type GitHubFake, startGitHubFake } from "../../src/test-support/github-fake.js";
import { conformingChange } from "../../src/test-support/run-fixture.js";
import { eventually } from "../../src/test-support/webhook-receiver.js";

const APP_ID = "123456";
const INSTALLATION = "987654";
const HEAD = "a".repeat(40);
const appKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  removeServerWorlds();
});

async function fake(): Promise<GitHubFake> {
  const f = await startGitHubFake({ appId: APP_ID, appKey, installationId: INSTALLATION });
  f.heads.set(7, HEAD);
  cleanups.push(() => f.close());
  return f;
}

function config(f: GitHubFake, repositories = ["acme/shop"]): GitHubAppConfig {
  return { appId: APP_ID, key: appKey, installationId: INSTALLATION, apiBase: f.url, repositories };
}

/** What serve does with --github-app: the store's github-check webhook, and the notifier with the check channel. */
async function serveChecks(
  w: ServerWorld,
  f: GitHubFake,
  o: { repositories?: string[]; timeoutMs?: number; channel?: DeliveryChannel } = {},
): Promise<{ close(): Promise<void> }> {
  await ensureCheckWebhook(w.store, f.url, new Date(Date.now() - 1000));
  const channel = o.channel ?? gitHubCheckChannel({ config: config(f, o.repositories), store: w.store, origin: TEST_ORIGIN });
  const n = startNotifier({
    store: w.store,
    origin: TEST_ORIGIN,
    pollMs: 50,
    baseDelayMs: 20,
    maxDelayMs: 100,
    timeoutMs: o.timeoutMs ?? 10_000,
    channels: { "github-check": channel },
  });
  cleanups.push(() => n.close());
  return n;
}

/** The agent freezes, the reviewer asks for changes, the agent freezes again, the reviewer approves and consents; each decision's answer. */
async function reviewFlow(w: ServerWorld): Promise<number[]> {
  const reviewer = await reviewerFor(w, "rita");
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
  const statuses: number[] = [];
  const freeze = async () => statuses.push((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status);
  await freeze();
  statuses.push(
    (await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback: "name the rollback" }))
      .status,
  );
  editReport(w, "rollback named");
  await freeze();
  statuses.push((await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "approved" })).status);
  statuses.push(
    (await decide(w, reviewer, apiOf(w).consent, { handoff_hash: hashNow(w), approve: true, mode: "APPLY_SAFE", environment: "staging" }))
      .status,
  );
  return statuses;
}

const checkWrites = (f: GitHubFake) => f.requests.filter((r) => r.method !== "GET" && r.path.includes("/check-runs"));
const titles = (f: GitHubFake) => checkWrites(f).map((r) => (r.body?.output as { title?: string } | undefined)?.title);

describe("serve --github-app posts a check run that says what is waiting", () => {
  it("creates the check on the pull request's head commit, then updates it on every state change, in order, with the installation token", async () => {
    const w = await serverWorld({ change: "acme/shop#7" });
    const f = await fake();
    await serveChecks(w, f);
    expect(await reviewFlow(w)).toEqual([200, 200, 200, 200, 200]);
    const executor = workflowNow(w).executor;
    await admit({ store: w.store, run: w.runFile, executor, actor: "operator" });
    await raiseStop({ store: w.store, run: w.runFile, reason: "stop-now", workflow: PLANNER, actor: "operator" });
    await closeWorkflow({ store: w.store, run: w.runFile, planner: PLANNER, result: "failed", actor: "operator" });
    const expected = [
      "plan waiting for review",
      "changes requested",
      "plan waiting for review",
      "approved, waiting for consent",
      "consent given, waiting for admission",
      "admitted: the executor may run",
      "stopped",
      "failed",
    ];
    await eventually(() => checkWrites(f).length >= expected.length, "every check update");
    expect(titles(f)).toEqual(expected);
    const writes = checkWrites(f);
    // One check run: made once on the head commit, then patched by its ID.
    expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /repos/acme/shop/check-runs",
      ...Array(expected.length - 1).fill("PATCH /repos/acme/shop/check-runs/1000"),
    ]);
    expect(writes[0]?.body).toMatchObject({ name: "twinlock", head_sha: HEAD, external_id: w.runId, status: "in_progress" });
    expect(writes[0]?.body?.details_url).toBe(`${TEST_ORIGIN}/runs/${w.runId}/pairs/${PLANNER}/revisions/1`);
    expect(writes.at(-1)?.body).toMatchObject({ status: "completed", conclusion: "failure" });
    // The JWT buys the token once; every repository call carries the token, never the JWT.
    expect(f.requests[0]).toMatchObject({ method: "POST", path: `/app/installations/${INSTALLATION}/access_tokens`, auth: "app-jwt" });
    expect(f.requests.filter((r) => r.auth === "app-jwt")).toHaveLength(1);
    expect(f.requests.slice(1).every((r) => r.auth === "installation-token")).toBe(true);
    // Reads: the pull request's head, and once before the check is made, the commit's check runs of this app (none yet).
    expect(f.requests.filter((r) => r.method === "GET" && r.path !== "/repos/acme/shop/pulls/7").map((r) => r.path)).toEqual([
      `/repos/acme/shop/commits/${HEAD}/check-runs`,
    ]);
  });

  it("remembers a check it found on the commit (another server's, or its own before a restart): later updates patch it without listing the commit's checks again", async () => {
    const w = await serverWorld({ change: "acme/shop#7" });
    const f = await fake();
    const first = await serveChecks(w, f);
    const reviewer = await reviewerFor(w, "rita");
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
    await eventually(() => checkWrites(f).length >= 1, "the check made");
    await first.close();
    // A restarted server: a new channel that made nothing, finding the check on the commit.
    await serveChecks(w, f);
    const decided = await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback: "x" });
    expect(decided.status).toBe(200);
    editReport(w, "rollback named");
    expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
    expect((await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "approved" })).status).toBe(200);
    await eventually(() => checkWrites(f).length >= 4, "every check update");
    expect(checkWrites(f).map((r) => r.method)).toEqual(["POST", "PATCH", "PATCH", "PATCH"]);
    // Listed once by each channel: before the first made the check, and when the second first needed it.
    expect(f.requests.filter((r) => r.method === "GET" && r.path === `/repos/acme/shop/commits/${HEAD}/check-runs`)).toHaveLength(2);
  });

  it("makes a new check on a new head commit when the agent pushes", async () => {
    const w = await serverWorld({ change: "acme/shop#7" });
    const f = await fake();
    await serveChecks(w, f);
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    await eventually(() => checkWrites(f).length >= 1, "the first check");
    f.heads.set(7, "b".repeat(40));
    const reviewer = await reviewerFor(w, "rita");
    await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback: "more" });
    await eventually(() => checkWrites(f).length >= 2, "the second check");
    expect(checkWrites(f).map((r) => [r.method, r.body?.head_sha])).toEqual([
      ["POST", HEAD],
      ["POST", "b".repeat(40)],
    ]);
  });

  it("puts a verified close's success on the commit the close judged only: a head pushed after it gets a check that is not success", async () => {
    const w = await serverWorld({ change: "acme/shop#7" });
    const f = await fake();
    await serveChecks(w, f);
    expect(await reviewFlow(w)).toEqual([200, 200, 200, 200, 200]);
    await admit({ store: w.store, run: w.runFile, executor: workflowNow(w).executor, actor: "operator" });
    await eventually(() => titles(f).includes("admitted: the executor may run"), "the admission's check");
    // The person judges the change at HEAD; the agent pushes another commit before the close's check is sent.
    const pushed = "b".repeat(40);
    f.heads.set(7, pushed);
    const closed = await closeWorkflow({
      store: w.store,
      run: w.runFile,
      planner: PLANNER,
      result: "verified",
      actor: "operator",
      executed: { ...conformingChange(w), commit: HEAD },
    });
    expect(closed.workflow.result?.execution?.commit).toBe(HEAD);
    const onCommit = (sha: string) => [...f.checkRuns.values()].filter((r) => r.head_sha === sha);
    await eventually(() => onCommit(HEAD).some((r) => r.status === "completed") && onCommit(pushed).length > 0, "the close's checks");
    expect(onCommit(HEAD)).toHaveLength(1);
    expect(onCommit(HEAD)[0]).toMatchObject({ status: "completed", conclusion: "success", output: { title: "verified" } });
    expect(onCommit(pushed)).toHaveLength(1);
    expect(onCommit(pushed)[0]).toMatchObject({
      status: "completed",
      conclusion: "neutral",
      output: { title: "the head moved past the verified commit" },
    });
    // Every request that set success names the judged commit's check run, never the pushed one's.
    const judgedId = onCommit(HEAD)[0]?.id;
    const successes = checkWrites(f).filter((r) => r.body?.conclusion === "success");
    expect(successes.length).toBeGreaterThan(0);
    expect(successes.every((r) => r.path === `/repos/acme/shop/check-runs/${judgedId}` || r.body?.head_sha === HEAD)).toBe(true);
  });

  it("gives no success to a verified close that recorded no commit", async () => {
    const w = await serverWorld({ change: "acme/shop#7" });
    const f = await fake();
    await serveChecks(w, f);
    await reviewFlow(w);
    await admit({ store: w.store, run: w.runFile, executor: workflowNow(w).executor, actor: "operator" });
    await closeWorkflow({
      store: w.store,
      run: w.runFile,
      planner: PLANNER,
      result: "verified",
      actor: "operator",
      executed: conformingChange(w),
    });
    await eventually(() => [...f.checkRuns.values()].some((r) => r.status === "completed"), "the close's check");
    expect([...f.checkRuns.values()].map((r) => [r.head_sha, r.conclusion, (r.output as { title: string }).title])).toEqual([
      [HEAD, "neutral", "verified, at no recorded commit"],
    ]);
  });

  it("posts nothing for a run bound to a repository the server was not given, or bound to no change", async () => {
    for (const change of ["evil/elsewhere#7", undefined]) {
      const w = await serverWorld(change ? { change } : {});
      const f = await fake();
      await serveChecks(w, f);
      await reviewFlow(w);
      // The outbox is emptied (each entry delivered as nothing to post) without one request to GitHub.
      await eventually(async () => (await w.store.notifications.backlog()).every((b) => b.pending === 0), "the outbox drained");
      expect(f.requests).toEqual([]);
    }
  });

  it("takes a branch change's head from the branch, its name escaped into one path segment", async () => {
    const w = await serverWorld({ change: "acme/shop@agent/../../../app/installations" });
    const f = await fake();
    f.heads.set(0, HEAD);
    await serveChecks(w, f);
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    await eventually(() => checkWrites(f).length >= 1, "the check");
    expect(f.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /app/installations/${INSTALLATION}/access_tokens`,
      "GET /repos/acme/shop/branches/agent%2F..%2F..%2F..%2Fapp%2Finstallations",
      `GET /repos/acme/shop/commits/${HEAD}/check-runs`,
      "POST /repos/acme/shop/check-runs",
    ]);
  });

  it("never waits on GitHub to decide: with GitHub failing, then hanging, every decision answers and is recorded; the updates follow in order once it recovers", async () => {
    const w = await serverWorld({ change: "acme/shop#7" });
    const f = await fake();
    let mode: "fail" | "hang" | "ok" = "fail";
    f.behave = (r) => (r.path.includes("/check-runs") ? (mode === "fail" ? 502 : mode === "hang" ? "hang" : undefined) : undefined);
    await serveChecks(w, f, { timeoutMs: 300 });
    const reviewer = await reviewerFor(w, "rita");
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
    await eventually(() => f.requests.filter((r) => r.path.includes("/check-runs")).length >= 2, "GitHub tried and failed twice");
    mode = "hang";
    const decided = await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback: "x" });
    expect(decided.status).toBe(200);
    expect(workflowNow(w).state).toBe("plan_revision_pending");
    editReport(w);
    expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
    expect((await decide(w, reviewer, apiOf(w).review, { handoff_hash: hashNow(w), decision: "approved" })).status).toBe(200);
    expect(workflowNow(w).state).toBe("execution_consent_pending");
    mode = "ok";
    const from = f.requests.length;
    const answered = () =>
      f.requests
        .slice(from)
        .filter((r) => r.method !== "GET" && r.path.includes("/check-runs"))
        .map((r) => (r.body?.output as { title?: string } | undefined)?.title);
    await eventually(() => answered().includes("approved, waiting for consent"), "the check caught up");
    // Once GitHub answers, each update once and in the run's order: nothing was lost or reordered while it failed.
    expect(answered()).toEqual([
      "plan waiting for review",
      "changes requested",
      "plan waiting for review",
      "approved, waiting for consent",
    ]);
    expect(f.checkRuns.size).toBe(1);
  });
});

describe("what the check says comes from the gate, never from agent-written text", () => {
  const base: Notification = {
    type: "plan.review_waiting",
    run_id: "run_0123456789abcdef",
    seq: 3,
    part: 0,
    at: "2026-01-01T00:00:00.000Z",
    planner: "MD-29",
    executor: "MD-30",
    executor_title: "Deploy",
    revision: 2,
    handoff_hash: `sha256:${"0".repeat(64)}`,
    asked: "a reviewer",
    by: "planner-agent",
    detail: null,
  };
  const state = (results: Array<"verified" | "failed" | null>, deviation = false): RunState =>
    ({
      run_id: base.run_id,
      workflows: Object.fromEntries(
        results.map((r, i) => [
          `MD-${29 + 2 * i}`,
          {
            result:
              r === null
                ? null
                : {
                    outcome: r,
                    execution: deviation
                      ? {
                          conformance: {
                            actions_not_done: [],
                            files_outside_plan: ["README.md"],
                            criteria_without_evidence: [],
                            criteria_failed: [],
                          },
                        }
                      : undefined,
                  },
          },
        ]),
      ),
    }) as unknown as RunState;

  it("keeps the status, conclusion, title and link whatever the agent wrote in the fields it controls", () => {
    const kinds = [
      "plan.review_waiting",
      "plan.changes_requested",
      "consent.waiting",
      "run.admitted",
      "stop.raised",
      "pair.closed",
    ] as const;
    fc.assert(
      fc.property(fc.constantFrom(...kinds), fc.string(), fc.string(), fc.string(), (type, by, title, detail) => {
        const plain = checkRunOf({ ...base, type }, state(["verified"]), TEST_ORIGIN);
        const hostile = checkRunOf({ ...base, type, by, executor_title: title, detail }, state(["verified"]), TEST_ORIGIN);
        expect({ ...hostile, summary: undefined }).toEqual({ ...plain, summary: undefined });
      }),
    );
  });

  it("shows agent text as one line of code with no link in it", () => {
    const out = checkRunOf(
      { ...base, detail: "![x](https://evil.example/p.png)\n# Approved `by` [admin](http://x.io)" },
      state([null]),
      TEST_ORIGIN,
    );
    const detail = out?.summary.split("\n").find((l) => l.startsWith("Detail:")) ?? "";
    expect(detail).not.toMatch(/https?:\/\/|evil\.example|x\.io/);
    expect(detail.match(/`/g)).toHaveLength(2);
    expect(out?.summary).not.toContain("\n# Approved");
  });

  it("succeeds only when every pair of the run is closed verified with a conforming change", () => {
    const closed = { ...base, type: "pair.closed" as const };
    expect(checkRunOf(closed, state(["verified"]), TEST_ORIGIN)).toMatchObject({
      status: "completed",
      conclusion: "success",
      title: "verified",
    });
    expect(checkRunOf(closed, state(["verified"], true), TEST_ORIGIN)).toMatchObject({ conclusion: "failure", title: "deviations" });
    expect(checkRunOf(closed, state(["verified", null]), TEST_ORIGIN)).toMatchObject({
      status: "in_progress",
      title: "verified; 1 more pair open",
    });
    expect(checkRunOf(closed, state(["verified", "failed"]), TEST_ORIGIN)).toMatchObject({ conclusion: "failure" });
    expect(checkRunOf({ ...base, type: "plan.approved" }, state([null]), TEST_ORIGIN)).toBeUndefined();
  });
});

describe("the GitHub App's options and JWT", () => {
  it("signs an RS256 JWT GitHub takes: iss the app ID, iat a minute back, exp under ten minutes on", () => {
    const jwt = signAppJwt(APP_ID, appKey, 1_700_000_000_000);
    const [h, p] = jwt
      .split(".")
      .slice(0, 2)
      .map((s) => JSON.parse(Buffer.from(s, "base64url").toString()));
    expect(h).toEqual({ alg: "RS256", typ: "JWT" });
    expect(p).toEqual({ iat: 1_700_000_000 - 60, exp: 1_700_000_000 + 540, iss: APP_ID });
  });

  it("refuses each missing or malformed option with one line, before anything starts", () => {
    const dir = removeLater();
    const pem = path.join(dir, "app.pem");
    writeFileSync(pem, appKey.export({ type: "pkcs1", format: "pem" }));
    const ed = path.join(dir, "ed.pem");
    writeFileSync(ed, generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }));
    const ok = { githubApp: APP_ID, githubAppKey: pem, githubInstallation: INSTALLATION, githubRepo: ["acme/shop"] };
    expect(parseGitHubAppFlags(ok)?.apiBase).toBe("https://api.github.com");
    expect(parseGitHubAppFlags({})).toBeUndefined();
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ githubRepo: ["a/b"] }, /go with --github-app ID/],
      [{ ...ok, githubApp: "12x" }, /is not an app ID/],
      [{ ...ok, githubInstallation: undefined }, /--github-installation ID is needed/],
      [{ ...ok, githubRepo: [] }, /--github-repo OWNER\/REPO is needed/],
      [{ ...ok, githubRepo: ["a/b/c"] }, /is not OWNER\/REPO/],
      [{ ...ok, githubAppKey: ed }, /a GitHub App's key is RSA/],
      [{ ...ok, githubAppKey: path.join(dir, "none.pem") }, /cannot be read \(ENOENT\)/],
      [{ ...ok, githubApi: "http://github.example/api/v3" }, /is not https/],
    ];
    for (const [flags, message] of refusals) {
      expect(() => parseGitHubAppFlags(flags as never)).toThrow(message);
      try {
        parseGitHubAppFlags(flags as never);
      } catch (error) {
        expect((error as Error).message).not.toContain("\n");
      }
    }
  });

  it("takes a GitHub Enterprise base, and plain http only to loopback", () => {
    expect(parseApiBase("https://ghe.example.com/api/v3/")).toBe("https://ghe.example.com/api/v3");
    expect(parseApiBase("http://127.0.0.1:9999")).toBe("http://127.0.0.1:9999");
    expect(() => parseApiBase("https://x.example/api?x=1")).toThrow(/no query/);
  });
});

function removeLater(): string {
  const { mkdtempSync, rmSync } = require("node:fs") as typeof import("node:fs");
  const os = require("node:os") as typeof import("node:os");
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-gh-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
