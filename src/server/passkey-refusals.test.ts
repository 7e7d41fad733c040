/**
 * What the server refuses around a passkey decision, each case played as
 * the agent (or a hostile page) would try it: a stale hash, a challenge
 * reused or carried over to another decision, the run changing while the
 * person signs, someone else's passkey, an assertion without user
 * verification or for another site, a missing CSRF token, a cross-origin
 * or oversized request. Every refusal leaves the run as it was.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readRun } from "../home/run-ledger.js";
import { createInvitation } from "../passkey/passkey-enrolment.js";
import { revokeReviewer } from "../passkey/reviewer-registry.js";
import { SoftwareAuthenticator } from "../passkey/software-authenticator.js";
import {
  apiOf,
  askChallenge,
  call,
  complete,
  decide,
  editReport,
  enrol,
  hashNow,
  jsonOf,
  PLANNER,
  type Reviewer,
  RP,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
  signIn,
  TEST_ORIGIN,
  workflowNow,
} from "../test-support/gate-server-fixture.js";
import { createAgentToken } from "./agent-tokens.js";

afterEach(removeServerWorlds);

interface Frozen {
  w: ServerWorld;
  alice: Reviewer;
  token: string;
}

/** A run frozen once by the agent through the API, and alice enrolled and signed in. */
async function frozen(o: { signing?: boolean } = {}): Promise<Frozen> {
  const w = await serverWorld({ signing: o.signing });
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
  const alice = await reviewerFor(w, "alice");
  if (o.signing) {
    const { freezePairHandoff } = await import("../gate/freeze-pair-handoff.js");
    await freezePairHandoff({ store: w.store, run: w.runFile, planner: PLANNER, handoffDir: w.handoff, key: w.plannerKey });
  } else expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
  return { w, alice, token };
}

async function refreeze(f: Frozen): Promise<void> {
  editReport(f.w, `revision ${Math.random()}`);
  expect((await call(f.w, apiOf(f.w).freeze, { token: f.token, json: {} })).status).toBe(200);
}

/** The run's recorded revision (its event count as the store lists it): unchanged by every refusal. */
async function runRevision(w: ServerWorld): Promise<number> {
  return (await w.store.list())[0]?.revision as number;
}

describe("a stale hash", () => {
  it("approving the previous revision's hash is refused 409 STALE_HASH, linking the current revision", async () => {
    const f = await frozen();
    const old = hashNow(f.w);
    const changes = await decide(f.w, f.alice, apiOf(f.w).review, { handoff_hash: old, decision: "changes_requested", feedback: "more" });
    expect(changes.status).toBe(200);
    await refreeze(f);
    const before = await runRevision(f.w);
    const r = await askChallenge(f.w, f.alice, apiOf(f.w).review, { handoff_hash: old, decision: "approved" });
    expect([r.status, r.body.code]).toEqual([409, "STALE_HASH"]);
    expect(r.body.stale_url).toBe(`/runs/${f.w.runId}/pairs/${PLANNER}`);
    expect(r.body.details).toMatchObject({ given_revision: 1, current_revision: 2 });
    // The link leads to the current revision's page.
    const page = await call(f.w, r.body.stale_url as string, { cookie: f.alice.cookie });
    expect([page.status, page.headers.get("location")]).toEqual([303, `/runs/${f.w.runId}/pairs/${PLANNER}/revisions/2`]);
    expect(await runRevision(f.w)).toBe(before);
  });

  it("approving an apply with a stale hash is refused 409 STALE_HASH", async () => {
    const f = await frozen();
    const r = await askChallenge(f.w, f.alice, apiOf(f.w).apply, { handoff_hash: `sha256:${"0".repeat(64)}` });
    expect([r.status, r.body.code]).toEqual([409, "STALE_HASH"]);
  });
});

describe("a signing request", () => {
  it("completes once: the same challenge signed again is refused CHALLENGE_EXPIRED", async () => {
    const f = await frozen();
    const fields = { handoff_hash: hashNow(f.w), decision: "changes_requested", feedback: "more tests" };
    const asked = await askChallenge(f.w, f.alice, apiOf(f.w).review, fields);
    expect((await complete(f.w, f.alice, apiOf(f.w).review, fields, asked.body as never)).status).toBe(200);
    const again = await complete(f.w, f.alice, apiOf(f.w).review, fields, asked.body as never);
    expect([again.status, again.body.code]).toEqual([409, "CHALLENGE_EXPIRED"]);
    expect(workflowNow(f.w).reviews).toHaveLength(1);
  });

  it("made for one decision cannot complete another: other decision, other feedback, other pair, other route", async () => {
    const f = await frozen();
    const hash = hashNow(f.w);
    const asked = { handoff_hash: hash, decision: "changes_requested", feedback: "add Windows coverage" };
    const before = await runRevision(f.w);
    for (const [url, fields] of [
      [apiOf(f.w).review, { handoff_hash: hash, decision: "approved" }],
      [apiOf(f.w).review, { ...asked, feedback: "looks fine, ship it" }],
      [apiOf(f.w).review.replace(`/${PLANNER}/`, "/MD-31/"), asked],
      [apiOf(f.w).consent, { handoff_hash: hash, approve: true }],
    ] as const) {
      const challenge = await askChallenge(f.w, f.alice, apiOf(f.w).review, asked);
      const r = await complete(f.w, f.alice, url, fields, challenge.body as never);
      expect([url, r.status, r.body.code]).toEqual([url, 409, "CHALLENGE_EXPIRED"]);
    }
    expect(await runRevision(f.w)).toBe(before);
  });

  it("made for one reviewer cannot be completed by another reviewer's session", async () => {
    const f = await frozen();
    const bob = await reviewerFor(f.w, "bob");
    const fields = { handoff_hash: hashNow(f.w), decision: "approved" };
    const challenge = await askChallenge(f.w, f.alice, apiOf(f.w).review, fields);
    const r = await complete(f.w, bob, apiOf(f.w).review, fields, challenge.body as never);
    expect([r.status, r.body.code]).toEqual([409, "CHALLENGE_EXPIRED"]);
    expect(workflowNow(f.w).reviews).toHaveLength(0);
  });

  it("is refused, recording nothing, when the agent re-freezes between the challenge and the signed answer", async () => {
    const f = await frozen();
    const fields = { handoff_hash: hashNow(f.w), decision: "approved" };
    const challenge = await askChallenge(f.w, f.alice, apiOf(f.w).review, fields);
    await refreeze(f);
    const before = await runRevision(f.w);
    const r = await complete(f.w, f.alice, apiOf(f.w).review, fields, challenge.body as never);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("STALE_HASH");
    expect(workflowNow(f.w)).toMatchObject({ state: "plan_review_pending", revision: 2, reviews: [] });
    expect(await runRevision(f.w)).toBe(before);
  });

  it("expires after two minutes", async () => {
    let clock = Date.now();
    const w = await serverWorld({ now: () => new Date(clock) });
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    const alice = await reviewerFor(w, "alice");
    await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    const fields = { handoff_hash: hashNow(w), decision: "approved" };
    const challenge = await askChallenge(w, alice, apiOf(w).review, fields);
    clock += 2 * 60 * 1000 + 1;
    const r = await complete(w, alice, apiOf(w).review, fields, challenge.body as never);
    expect([r.status, r.body.code]).toEqual([409, "CHALLENGE_EXPIRED"]);
  });
});

for (const signing of [false, true]) {
  describe(`an assertion that must not count (${signing ? "signing suite" : "--allow-unsigned suite"})`, () => {
    const cases: Array<[string, (f: Frozen) => Promise<{ signer: SoftwareAuthenticator; tweaks?: object }>, number, string?]> = [
      ["from another reviewer's passkey", async (f) => ({ signer: await enrol(f.w, "bob") }), 403, "UNKNOWN_PASSKEY"],
      ["from a passkey nobody enrolled", async () => ({ signer: new SoftwareAuthenticator() }), 403, "UNKNOWN_PASSKEY"],
      ["without user verification", async (f) => ({ signer: f.alice.authenticator, tweaks: { userVerified: false } }), 409],
      ["without user presence", async (f) => ({ signer: f.alice.authenticator, tweaks: { userPresent: false } }), 409],
      ["made on another origin", async (f) => ({ signer: f.alice.authenticator, tweaks: { origin: "https://evil.example" } }), 409],
      ["made for another RP ID", async (f) => ({ signer: f.alice.authenticator, tweaks: { rpId: "evil.example" } }), 409],
      ["made at registration, not sign-in", async (f) => ({ signer: f.alice.authenticator, tweaks: { type: "webauthn.create" } }), 409],
    ];
    for (const [what, make, status, code] of cases)
      it(`is refused ${status} when ${what}, and nothing is recorded`, async () => {
        const f = await frozen({ signing });
        const { signer, tweaks } = await make(f);
        const fields = { handoff_hash: hashNow(f.w), decision: "approved" };
        const challenge = await askChallenge(f.w, f.alice, apiOf(f.w).review, fields);
        const before = await runRevision(f.w);
        const r = await complete(f.w, f.alice, apiOf(f.w).review, fields, challenge.body as never, signer, tweaks);
        expect(r.status, JSON.stringify(r.body)).toBe(status);
        if (code) expect(r.body.code).toBe(code);
        expect(workflowNow(f.w).reviews).toEqual([]);
        expect(await runRevision(f.w)).toBe(before);
      });
  });
}

describe("CSRF, Origin, Host and bodies", () => {
  it("refuses a decision without the session's CSRF token, or with another one, 403 CSRF", async () => {
    const f = await frozen();
    const fields = { handoff_hash: hashNow(f.w), decision: "approved" };
    for (const csrf of [undefined, "", "x".repeat(43), f.alice.csrf.slice(0, -1)]) {
      for (const url of [`${apiOf(f.w).review}/challenge`, apiOf(f.w).review, "/signout"]) {
        const r = await jsonOf(await call(f.w, url, { json: fields, cookie: f.alice.cookie, ...(csrf === undefined ? {} : { csrf }) }));
        expect([url, r.status, r.body.code]).toEqual([url, 403, "CSRF"]);
      }
    }
  });

  it("accepts the CSRF token as a form field, as the pages post it", async () => {
    const f = await frozen();
    const r = await jsonOf(
      await call(f.w, `${apiOf(f.w).review}/challenge`, {
        form: { handoff_hash: hashNow(f.w), decision: "changes_requested", feedback: "more", csrf: f.alice.csrf },
        cookie: f.alice.cookie,
      }),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((r.body.options as { userVerification: string }).userVerification).toBe("required");
  });

  it("refuses a POST from another origin 403 WRONG_ORIGIN, even with a valid session and CSRF token or an agent token", async () => {
    const f = await frozen();
    const evil = { origin: "https://evil.example" };
    const decision = await jsonOf(
      await call(f.w, `${apiOf(f.w).review}/challenge`, {
        json: { handoff_hash: hashNow(f.w), decision: "approved" },
        cookie: f.alice.cookie,
        csrf: f.alice.csrf,
        headers: evil,
      }),
    );
    expect([decision.status, decision.body.code]).toEqual([403, "WRONG_ORIGIN"]);
    const freeze = await jsonOf(await call(f.w, apiOf(f.w).freeze, { token: f.token, json: {}, headers: evil }));
    expect([freeze.status, freeze.body.code]).toEqual([403, "WRONG_ORIGIN"]);
    for (const o of ["null", "http://localhost:7421", "https://localhost:7420", "http://localhost:7420.evil.example"]) {
      const r = await call(f.w, "/signin/options", { method: "POST", headers: { origin: o } });
      expect([o, r.status]).toEqual([o, 403]);
    }
    expect((await call(f.w, "/signin/options", { method: "POST", headers: { origin: TEST_ORIGIN } })).status).toBe(200);
  });

  it("refuses a request for another Host 421 WRONG_HOST", async () => {
    const f = await frozen();
    for (const host of ["evil.example", "evil.example:7420", "127.0.0.1:7420", ""]) {
      const r = await jsonOf(await call(f.w, "/healthz", { headers: { host } }));
      expect([host, r.status, r.body.code]).toEqual([host, 421, "WRONG_HOST"]);
    }
  });

  it("refuses a body over 256 KiB 413 and a body that is neither JSON nor a form 415", async () => {
    const f = await frozen();
    const big = JSON.stringify({ handoff_dir: "x".repeat(256 * 1024) });
    const r = await jsonOf(
      await call(f.w, apiOf(f.w).freeze, { token: f.token, body: big, headers: { "content-type": "application/json" } }),
    );
    expect([r.status, r.body.code]).toEqual([413, "TOO_LARGE"]);
    const sized = await call(f.w, apiOf(f.w).freeze, {
      token: f.token,
      body: big,
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(big)) },
    });
    expect(sized.status).toBe(413);
    for (const type of ["text/plain", "application/xml", "application/jsonx"]) {
      const t = await call(f.w, apiOf(f.w).freeze, { token: f.token, body: "{}", headers: { "content-type": type } });
      expect([type, t.status]).toEqual([type, 415]);
    }
    // The media type is read as RFC 9110 says: case-insensitive, parameters ignored.
    const cased = await call(f.w, apiOf(f.w).admission, {
      token: f.token,
      body: "{}",
      headers: { "content-type": "Application/JSON; charset=utf-8" },
    });
    expect(cased.status).toBe(200);
    const notJson = await jsonOf(
      await call(f.w, apiOf(f.w).freeze, { token: f.token, body: "{", headers: { "content-type": "application/json" } }),
    );
    expect([notJson.status, notJson.body.code]).toEqual([400, "BAD_INPUT"]);
  });

  it("limits failed sign-ins: the 31st failure within a minute is answered 429, and a valid passkey still signs in", async () => {
    const w = await serverWorld();
    const auth = await enrol(w, "alice");
    for (let i = 0; i < 30; i++)
      expect((await call(w, "/signin", { json: { response: auth.assert(Buffer.alloc(32), RP) } })).status).toBe(409);
    const r = await call(w, "/signin", { json: { response: auth.assert(Buffer.alloc(32), RP) } });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await r.json()) as { code: string }).code).toBe("RATE_LIMITED");
    await expect(signIn(w, "alice", auth)).resolves.toMatchObject({ name: "alice" });
  });
});

describe("sign-in", () => {
  it("refuses an answer signed without a sign-in request, or for a challenge other than the one issued", async () => {
    const w = await serverWorld();
    const auth = await enrol(w, "alice");
    const noCookie = await jsonOf(await call(w, "/signin", { json: { response: auth.assert(Buffer.alloc(32), RP) } }));
    expect([noCookie.status, noCookie.body.code]).toEqual([409, "CHALLENGE_EXPIRED"]);
    const options = await call(w, "/signin/options", { method: "POST" });
    const cookie = options.headers.getSetCookie()[0]?.split(";")[0];
    const wrong = await jsonOf(await call(w, "/signin", { json: { response: auth.assert(Buffer.alloc(32, 7), RP) }, cookie }));
    expect([wrong.status, wrong.body.code]).toEqual([403, "BAD_ASSERTION"]);
  });

  it("refuses a sign-in without user verification", async () => {
    const w = await serverWorld();
    const auth = await enrol(w, "alice");
    const options = await call(w, "/signin/options", { method: "POST" });
    const cookie = options.headers.getSetCookie()[0]?.split(";")[0];
    const { challenge } = ((await options.json()) as { options: { challenge: string } }).options;
    const r = await call(w, "/signin", { json: { response: auth.assert(challenge, RP, { userVerified: false }) }, cookie });
    expect(r.status).toBe(403);
    expect(r.headers.getSetCookie().some((c) => c.startsWith("twinlock_session="))).toBe(false);
  });

  it("signs a revoked reviewer out at once: the next page and decision are refused 401", async () => {
    const f = await frozen();
    expect((await call(f.w, "/", { cookie: f.alice.cookie })).status).toBe(200);
    await revokeReviewer(f.w.home, "alice");
    expect((await call(f.w, "/", { cookie: f.alice.cookie })).status).toBe(401);
    const r = await askChallenge(f.w, f.alice, apiOf(f.w).review, { handoff_hash: hashNow(f.w), decision: "approved" });
    expect([r.status, r.body.code]).toEqual([401, "SIGN_IN"]);
  });

  it("ends the session on sign-out: the page's script gets JSON, a plain form post (no script) is sent to the sign-in page", async () => {
    const f = await frozen();
    const out = await call(f.w, "/signout", {
      method: "POST",
      cookie: f.alice.cookie,
      csrf: f.alice.csrf,
      headers: { accept: "application/json" },
    });
    expect([out.status, ((await out.json()) as { location: string }).location]).toEqual([200, "/signin"]);
    expect((await call(f.w, "/", { cookie: f.alice.cookie })).status).toBe(401);
    const bob = await reviewerFor(f.w, "bob");
    const plain = await call(f.w, "/signout", { form: { csrf: bob.csrf }, cookie: bob.cookie, headers: { accept: "text/html" } });
    expect([plain.status, plain.headers.get("location")]).toEqual([303, "/signin"]);
    expect((await call(f.w, "/", { cookie: bob.cookie })).status).toBe(401);
    // Without the session's CSRF token, nobody is signed out by a cross-site form.
    const carol = await reviewerFor(f.w, "carol");
    expect((await call(f.w, "/signout", { form: { csrf: "forged" }, cookie: carol.cookie })).status).toBe(403);
    expect((await call(f.w, "/", { cookie: carol.cookie })).status).toBe(200);
  });
});

describe("enrolment links", () => {
  it("work once: a used link is refused, by page and by API", async () => {
    const w = await serverWorld();
    const { token } = await createInvitation(w.home, "alice", ["review"]);
    const started = await jsonOf(await call(w, `/enrol/${token}/options`, { method: "POST" }));
    const response = new SoftwareAuthenticator().register(started.body.options as never, TEST_ORIGIN);
    expect((await call(w, `/enrol/${token}`, { json: { response } })).status).toBe(200);
    const again = await jsonOf(await call(w, `/enrol/${token}/options`, { method: "POST" }));
    expect([again.status, again.body.code]).toEqual([409, "used-invitation"]);
    expect((await call(w, `/enrol/${token}`, { headers: { accept: "text/html" } })).status).toBe(404);
    const replay = await jsonOf(await call(w, `/enrol/${token}`, { json: { response } }));
    expect([replay.status, replay.body.code]).toEqual([409, "used-invitation"]);
  });

  it("expire after 15 minutes", async () => {
    const w = await serverWorld();
    const { token } = await createInvitation(w.home, "alice", ["review"], new Date(Date.now() - 16 * 60 * 1000));
    const r = await jsonOf(await call(w, `/enrol/${token}/options`, { method: "POST" }));
    expect([r.status, r.body.code]).toEqual([409, "expired-invitation"]);
    expect((await call(w, `/enrol/${token}`)).status).toBe(404);
  });

  it("refuse a registration without user verification, and the link stays usable", async () => {
    const w = await serverWorld();
    const { token } = await createInvitation(w.home, "alice", ["review"]);
    const started = await jsonOf(await call(w, `/enrol/${token}/options`, { method: "POST" }));
    const auth = new SoftwareAuthenticator();
    const r = await call(w, `/enrol/${token}`, {
      json: { response: auth.register(started.body.options as never, TEST_ORIGIN, { userVerified: false }) },
    });
    expect(r.status).toBe(409);
    expect((await call(w, `/enrol/${token}`)).status).toBe(200);
  });
});

describe("rights and settings", () => {
  it("refuses a consent by a reviewer without the consent right 403 NO_RIGHT", async () => {
    const f = await frozen();
    expect((await decide(f.w, f.alice, apiOf(f.w).review, { handoff_hash: hashNow(f.w), decision: "approved" })).status).toBe(200);
    const carol = await reviewerFor(f.w, "carol", ["review"]);
    const r = await askChallenge(f.w, carol, apiOf(f.w).consent, { handoff_hash: hashNow(f.w), approve: true });
    expect([r.status, r.body.code]).toEqual([403, "NO_RIGHT"]);
    expect(workflowNow(f.w).consents).toEqual([]);
  });

  it("refuses consent form fields that differ from the run's settings 409 SETTINGS_DIFFER", async () => {
    const f = await frozen();
    expect((await decide(f.w, f.alice, apiOf(f.w).review, { handoff_hash: hashNow(f.w), decision: "approved" })).status).toBe(200);
    const differing: Array<Record<string, string>> = [
      { mode: "APPLY_APPROVED" },
      { environment: "production" },
      { budget: "5" },
      { actions: "A-1" },
    ];
    for (const differs of differing) {
      const r = await jsonOf(
        await call(f.w, `${apiOf(f.w).consent}/challenge`, {
          form: { handoff_hash: hashNow(f.w), decision: "approved", csrf: f.alice.csrf, ...differs },
          cookie: f.alice.cookie,
        }),
      );
      expect([differs, r.status, r.body.code]).toEqual([differs, 409, "SETTINGS_DIFFER"]);
    }
    const same = await jsonOf(
      await call(f.w, `${apiOf(f.w).consent}/challenge`, {
        form: {
          handoff_hash: hashNow(f.w),
          decision: "approved",
          csrf: f.alice.csrf,
          mode: "APPLY_SAFE",
          environment: "staging",
          budget: "",
          actions: "all",
        },
        cookie: f.alice.cookie,
      }),
    );
    expect(same.status, JSON.stringify(same.body)).toBe(200);
  });

  it("raises a stop with a passkey confirmation and lifts it only with the stop right", async () => {
    const f = await frozen();
    const raised = await decide(f.w, f.alice, apiOf(f.w).stops, { reason: "incident-open" });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    const carol = await reviewerFor(f.w, "carol", ["review"]);
    const stops = [readRun(f.w.runFile, f.w.home).file.revision];
    const refused = await askChallenge(f.w, carol, apiOf(f.w).lift, { reason: "incident-open", stops, note: "resolved" });
    expect([refused.status, refused.body.code]).toEqual([403, "NO_RIGHT"]);
    const lifted = await decide(f.w, f.alice, apiOf(f.w).lift, { reason: "incident-open", stops, note: "resolved" });
    expect(lifted.status, JSON.stringify(lifted.body)).toBe(200);
    expect((lifted.body.receipt as { signature: { kind: string } }).signature.kind).toBe("webauthn");
  });
});
