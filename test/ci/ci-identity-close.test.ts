/**
 * A verified close by the CI identity of the trust export (issue 26): a
 * reviewer whose only right is `verify`, named by `trust export
 * --ci-identity`, whose key CI holds. CI runs `verify`, and when it passes
 * closes the pair verified with that key; `verify --trust` then accepts the
 * close as the CI identity's. Neither an agent's token nor the agent's own
 * key can say verified.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createPrivateKey } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { createAgentToken } from "../../src/server/agent-tokens.js";
import { createGateApp } from "../../src/server/create-gate-app.js";
import {
  conformingChange,
  type GateRun,
  homeOf,
  makeGateRun,
  makeRunTempDir,
  PLANNER,
  removeGateRuns,
  storeOf,
  TEST_PINNER,
  workflowOf,
} from "../../src/test-support/run-fixture.js";
import { ALICE_KEY, driveSignedToExecuting } from "../../src/test-support/signed-run.js";
import { generateReviewerKey, publicKeyLine } from "../../src/trust/keys.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

beforeAll(ensureBuilt, 240_000);
afterAll(removeGateRuns);

const CHANGE = "acme/shop#42";
const CI_KEY = createPrivateKey(generateReviewerKey().privatePem);
const PLANNER_KEY = createPrivateKey(generateReviewerKey().privatePem);

/** The built CLI, run in `cwd` as CI runs it (TWINLOCK_KEY unset: each key is given with --key). */
function twinlock(cwd: string, ...args: string[]): { status: number | null; out: string } {
  const env = { ...process.env };
  delete env.TWINLOCK_KEY;
  delete env.TWINLOCK_STORE;
  const r = spawnSync(process.execPath, [DIST_BIN, ...args], { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return { status: r.status, out: r.stdout + r.stderr };
}

const gitIn = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir })
    .toString()
    .trim();

const keyFile = (dir: string, name: string, key = CI_KEY) => {
  const file = path.join(dir, `${name}.key`);
  writeFileSync(file, key.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  return file;
};

interface World {
  g: GateRun;
  keys: string;
  repo: string;
  base: string;
  head: string;
  /** What `trust export --ci-identity ci` printed. */
  exported: { status: number | null; out: string };
}

const TRUST = "twinlock-trust.json";
const PINNER_PUB = "twinlock-pinner.pub";

const runState = (g: GateRun) => JSON.parse(readFileSync(g.runFile, "utf8")).state as { run_id: string; suite: { suite_id: string } };

/**
 * A signing suite listing alice (review, consent, apply), `ci` (`ciRights`, by default verify only) and the planner
 * agent (freeze); a run made for CHANGE driven to executing by alice; a checkout whose base commit holds the run,
 * the trust file a pinner exported naming `ci` as the CI identity (`edit` changes it after the signature, as an
 * agent would) and the pinner's public key; its head commit the conforming change.
 */
async function world(o: { ciRights?: string[]; edit?: (doc: { trust: Record<string, unknown> }) => void } = {}): Promise<World> {
  const g = makeGateRun({ copySuite: true });
  const file = path.join(g.suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(file, "utf8"));
  doc.set("reviewers", [
    { name: "alice", public_key: publicKeyLine(ALICE_KEY), rights: ["review", "consent", "apply"] },
    { name: "ci", public_key: publicKeyLine(CI_KEY), rights: o.ciRights ?? ["verify"] },
    { name: "planner-agent", public_key: publicKeyLine(PLANNER_KEY), rights: ["freeze"] },
  ]);
  doc.setIn(["policies", "require_signed_receipts"], true);
  doc.setIn(["policies", "separate_duties"], false);
  writeFileSync(file, doc.toString());
  await driveSignedToExecuting(g, { change: CHANGE }, { freezeKey: PLANNER_KEY });
  const keys = makeRunTempDir("twinlock-ci-keys-");
  const parent = makeRunTempDir("twinlock-ci-close-");
  const repo = path.join(parent, "checkout");
  mkdirSync(path.join(repo, "twinlock"), { recursive: true });
  cpSync(g.runFile, path.join(repo, "twinlock/run.json"));
  cpSync(g.handoff, path.join(repo, "twinlock/handoff"), { recursive: true });
  writeFileSync(path.join(repo, PINNER_PUB), `${publicKeyLine(TEST_PINNER)}\n`);
  // The gate's home pins several suites (the tests share one): this run's is named.
  const exported = twinlock(
    repo,
    ...["trust", "export", "--out", TRUST, "--key", keyFile(keys, "pinner", TEST_PINNER), "--home", g.home],
    ...["--suite-id", runState(g).suite.suite_id, "--ci-identity", "ci"],
  );
  if (o.edit && exported.status === 0) {
    const signed = JSON.parse(readFileSync(path.join(repo, TRUST), "utf8"));
    o.edit(signed);
    writeFileSync(path.join(repo, TRUST), JSON.stringify(signed));
  }
  gitIn(repo, "init", "-q", "-b", "main");
  gitIn(repo, "add", "-A");
  gitIn(repo, "commit", "-q", "-m", "base");
  const base = gitIn(repo, "rev-parse", "HEAD");
  // The executor's change, as the plan's actions say (A1's race test, A2's cart/cache.go).
  conformingChange({ dir: parent });
  gitIn(repo, "add", "cart");
  gitIn(repo, "commit", "-q", "-m", "the planned change");
  return { g, keys, repo, base, head: gitIn(repo, "rev-parse", "HEAD"), exported };
}

const verify = (w: World) =>
  twinlock(
    w.repo,
    "verify",
    "twinlock/run.json",
    "--trust",
    TRUST,
    "--pinner-key",
    PINNER_PUB,
    "--git-range",
    `${w.base}...${w.head}`,
    "--change",
    CHANGE,
  );

const closeVerified = (w: World, key: string) =>
  twinlock(
    w.repo,
    "close",
    w.g.runFile,
    PLANNER,
    "--result",
    "verified",
    "--git-range",
    `${w.base}...${w.head}`,
    "--criterion",
    "V1=passed:go test ./cart/...",
    "--criterion",
    "V2=passed:go test -race ./cart/...",
    "--key",
    key,
    "--home",
    w.g.home,
  );

describe("a verified close by the trust export's CI identity", () => {
  it("is CI's step after verify passes: closed with the CI key, then accepted by verify --trust as the CI identity's", async () => {
    const w = await world();
    expect(w.exported.status, w.exported.out).toBe(0);
    expect(w.exported.out).toMatch(/^ {2}ci: key .*\(verify\), the CI identity/m);
    expect(JSON.parse(readFileSync(path.join(w.repo, TRUST), "utf8")).trust.ci_identity).toEqual({
      name: "ci",
      public_key: publicKeyLine(CI_KEY),
    });
    const before = verify(w);
    expect(before.status, before.out).toBe(0);
    const closed = closeVerified(w, keyFile(w.keys, "ci"));
    expect(closed.status, closed.out).toBe(0);
    expect(closed.out).toContain("verified by ci (signed)");
    expect(workflowOf(w.g).result?.receipt?.signature).toMatchObject({ signer: "ci", public_key: publicKeyLine(CI_KEY) });
    // The close records the commit it judged (the range's right side), which the check run's success names.
    expect(workflowOf(w.g).result?.execution?.commit).toBe(w.head);
    // CI's evidence is the gate's record of the run, now closed: it replaces the checkout's copy.
    cpSync(w.g.runFile, path.join(w.repo, "twinlock/run.json"));
    const after = verify(w);
    expect(after.status, after.out).toBe(0);
    expect(after.out).toMatch(/^ok .*MD-29 rev \d+ verification: signed by ci, the trust file's CI identity$/m);
    expect(after.out).toMatch(/^ok .*outcome .*closed verified$/m);
  });

  it("cannot be made with the agent's token (a report is never verified), nor with the agent's own key", async () => {
    const w = await world();
    const runId = runState(w.g).run_id;
    const { token } = await createAgentToken(homeOf(w.g), { agent: "executor-agent", runId });
    const { app } = createGateApp({ store: storeOf(w.g), origin: "http://localhost:7420", allowedHosts: ["localhost:7420"], tls: false });
    const answer = await app.request(`http://localhost:7420/api/runs/${runId}/pairs/${PLANNER}/result`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", host: "localhost:7420" },
      body: JSON.stringify({ result: "verified" }),
    });
    expect(answer.status).not.toBe(200);
    expect(await answer.text()).toContain("verified is a person's call");
    const own = closeVerified(w, keyFile(w.keys, "planner-agent", PLANNER_KEY));
    expect(own.status).toBe(1);
    expect(own.out).toMatch(/planner-agent's key has the rights freeze, not verify/);
    expect(workflowOf(w.g).state).toBe("executing");
  });

  it("is named only for a key whose one right is verify: CI never reviews or consents to what it closes", async () => {
    const w = await world({ ciRights: ["review", "verify"] });
    expect(w.exported.status).toBe(2);
    expect(w.exported.out).toContain("the CI identity ci has the rights review, verify; CI's identity may only verify");
    const unknown = twinlock(
      w.repo,
      ...["trust", "export", "--out", "other.json", "--key", keyFile(w.keys, "pinner", TEST_PINNER), "--home", w.g.home],
      ...["--suite-id", runState(w.g).suite.suite_id, "--ci-identity", "nobody"],
    );
    expect(unknown.status).toBe(2);
    expect(unknown.out).toContain("the CI identity nobody is not a reviewer of the pinned suite");
  });

  it("refuses a trust file whose CI identity the agent swapped for its own key (the pinner's signature no longer holds)", async () => {
    const w = await world({
      edit: (doc) => {
        (doc.trust.ci_identity as { public_key: string }).public_key = publicKeyLine(PLANNER_KEY);
      },
    });
    const r = verify(w);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/does not match its signature/);
  });
});
