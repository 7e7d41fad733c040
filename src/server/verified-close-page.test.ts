/**
 * A verified close from the page (issue 27): a reviewer with the `verify`
 * right closes an executing pair as verified with their passkey, the
 * verification receipt bound to the change they list; without the right,
 * on a change that does not conform, or with a malformed list, nothing is
 * recorded.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admit } from "../gate/admit.js";
import {
  askChallenge,
  call,
  decide,
  EXECUTOR,
  freezeApproveConsent,
  hashNow,
  PLANNER,
  type Reviewer,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
  workflowNow,
} from "../test-support/gate-server-fixture.js";
import { createAgentToken } from "./agent-tokens.js";
import { apiPaths } from "./api-paths.js";

let w: ServerWorld;
let alice: Reviewer;
let bob: Reviewer;
let url: string;

/** One changed file as sha256sum prints it. */
const line = (path: string, text: string) => `${createHash("sha256").update(text).digest("hex")}  ${path}`;
/** The change that conforms to the demo plan: both actions' targets, both criteria passed. */
const CONFORMING = {
  changed_files: [line("cart/cache_race_test.go", "test"), line("cart/cache.go", "fix"), ""].join("\n"),
  "criterion-result:V1": "passed",
  "criterion-command:V1": "go test -run TestCartCacheRace ./cart/",
  "criterion-result:V2": "passed",
  "criterion-command:V2": "go test -race ./cart/...",
};

beforeAll(async () => {
  w = await serverWorld({ config: { insecureHttp: false } });
  alice = await reviewerFor(w, "alice");
  bob = await reviewerFor(w, "bob", ["review", "verify"]);
  await freezeApproveConsent(w, alice);
  const admitted = await admit({ store: w.store, run: w.runFile, executor: EXECUTOR, actor: "executor-agent" });
  expect(admitted.admitted, JSON.stringify(admitted.checks.filter((c) => !c.ok))).toBe(true);
  url = apiPaths.verifiedClose(w.runId, PLANNER);
});
afterAll(removeServerWorlds);

const runBytes = () => readFileSync(w.runFile);

describe("a verified close on the page", () => {
  it("is offered on the executing revision: the changed files and each acceptance criterion's result and command, labelled", async () => {
    const r = await call(w, `/runs/${w.runId}/pairs/${PLANNER}/revisions/1`, { cookie: bob.cookie, headers: { accept: "text/html" } });
    const html = await r.text();
    expect(html).toContain(`<form id="form-verified-close" class="decision" method="post" action="${url}" data-passkey>`);
    expect(html).toContain(`<textarea id="verify-changed-files" name="changed_files" rows="4" required spellcheck="false"></textarea>`);
    expect(html).toContain(`<select id="verify-result-0" name="criterion-result:V1">`);
    expect(html).toContain(`<input type="text" id="verify-command-1" name="criterion-command:V2" autocomplete="off">`);
  });

  it("is refused 403 NO_RIGHT to a reviewer without the verify right, before the passkey is asked, and records nothing", async () => {
    const before = runBytes();
    const r = await askChallenge(w, alice, url, { handoff_hash: hashNow(w), ...CONFORMING });
    expect([r.status, r.body.code]).toEqual([403, "NO_RIGHT"]);
    expect(runBytes().equals(before)).toBe(true);
  });

  it("is refused to the agent's token (attack: the agent says its own work is verified)", async () => {
    const { token } = await createAgentToken(w.home, { agent: "executor-agent", runId: w.runId });
    const before = runBytes();
    for (const u of [url, `${url}/challenge`]) {
      const r = await call(w, u, { token, json: { handoff_hash: hashNow(w), ...CONFORMING } });
      expect([u, r.status]).toEqual([u, 403]);
    }
    expect(runBytes().equals(before)).toBe(true);
  });

  it("refuses a change that does not conform (an action not done), naming it, and records nothing", async () => {
    const before = runBytes();
    const r = await askChallenge(w, bob, url, {
      ...CONFORMING,
      handoff_hash: hashNow(w),
      changed_files: line("cart/cache_race_test.go", "t"),
    });
    expect(r.status).toBe(409);
    expect(String(r.body.message)).toContain("does not conform to the approved plan (action A2 not done");
    expect(runBytes().equals(before)).toBe(true);
  });

  it("refuses a changed-files line that is not SHA256 PATH or deleted PATH with one line naming it", async () => {
    const r = await askChallenge(w, bob, url, { ...CONFORMING, handoff_hash: hashNow(w), changed_files: "cart/cache.go" });
    expect([r.status, r.body.code]).toEqual([400, "BAD_INPUT"]);
    expect(String(r.body.message)).toContain(`line 1 of the changed files is not "SHA256 PATH" or "deleted PATH"`);
  });

  it("closes verified under bob's passkey: a verification receipt bound to the listed change, which verifies", async () => {
    const done = await decide(w, bob, url, { handoff_hash: hashNow(w), ...CONFORMING });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.location).toBe(`/runs/${w.runId}/pairs/${PLANNER}/revisions/1?recorded=verification`);
    const wf = workflowNow(w);
    expect([
      wf.state,
      wf.result?.outcome,
      wf.result?.receipt?.by,
      (wf.result?.receipt?.signature as { kind?: string } | undefined)?.kind,
    ]).toEqual(["closed", "verified", "bob", "webauthn"]);
    expect(wf.result?.execution?.changed_files.map((f) => f.path)).toEqual(["cart/cache_race_test.go", "cart/cache.go"]);
    const page = await call(w, done.body.location as string, { cookie: bob.cookie, headers: { accept: "text/html" } });
    const html = await page.text();
    expect(html).toContain("Your verification receipt: <strong>verified</strong> on revision 1, signed with your passkey");
    expect(html).not.toContain('id="form-verified-close"');
    // The timeline judges the receipt under the enrolment's rights, as admission and CI would.
    expect(html).toContain("bob&#39;s enrolled passkey, verify right");
  });
});
