/**
 * Who may call which route, route by route, read from the routes the app
 * registers: an agent's token (whatever its scopes) reaches only the five
 * agent operations, never a human decision or a page; nobody anonymous
 * reaches anything but sign-in, enrolment, assets and discovery. A route
 * added later without its check fails here, because the lists below are
 * of what is allowed, and everything else must refuse.
 */
import { createPrivateKey } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiOf,
  call,
  EXECUTOR,
  jsonOf,
  PLANNER,
  removeServerWorlds,
  type ServerWorld,
  serverWorld,
  TEST_HOST,
} from "../test-support/gate-server-fixture.js";
import { generateReviewerKey } from "../trust/keys.js";
import { AGENT_SCOPES, createAgentToken, revokeAgentToken } from "./agent-tokens.js";

let w: ServerWorld;
let token: string;

beforeAll(async () => {
  w = await serverWorld();
  token = (await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId, scopes: AGENT_SCOPES })).token;
  // The pair is frozen, so the revision page and plan exist for every route to reach its check.
  const frozen = await call(w, apiOf(w).freeze, { json: { handoff_dir: w.handoff }, token });
  expect(frozen.status).toBe(200);
});
afterAll(removeServerWorlds);

/** Every method and path the app registers (middleware left out), each once. */
function registeredRoutes(): Array<{ method: string; path: string }> {
  const seen = new Map<string, { method: string; path: string }>();
  for (const r of w.app.routes) if (r.method !== "ALL") seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  return [...seen.values()];
}

/** A route's pattern with the fixture's run, pair and revision filled in. */
function concrete(pattern: string): string {
  return pattern
    .replace(":runId", w.runId)
    .replace(":planner", PLANNER)
    .replace(":executor", EXECUTOR)
    .replace(":revision", "1")
    .replace(":token", "not-a-real-invitation")
    .replace(":name", "twinlock.css");
}

/** What an agent's token may reach: the five scopes' operations (and the list of its own run). */
const AGENT_ROUTES = new Set([
  "GET /api/runs",
  "GET /api/runs/:runId",
  "GET /api/runs/:runId/pairs/:planner",
  "GET /api/runs/:runId/pairs/:planner/plan",
  "POST /api/runs/:runId/pairs/:planner/freeze",
  "POST /api/runs/:runId/executors/:executor/admission-check",
  "POST /api/runs/:runId/pairs/:planner/result",
]);

/** What CI's token reaches (`token create --ci`, the export scope alone); an agent's token is refused there by its scope. */
const CI_ROUTES = new Set(["GET /api/runs/:runId/export"]);

/** What anyone may reach without signing in: sign-in, enrolment (an invitation is the credential), assets, discovery. */
const PUBLIC_ROUTES = new Set([
  "GET /signin",
  "POST /signin/options",
  "POST /signin",
  "GET /enrol/:token",
  "POST /enrol/:token/options",
  "POST /enrol/:token",
  "GET /assets/:name",
  "GET /openapi.json",
  "GET /healthz",
  "GET /readyz",
  "GET /favicon.ico",
]);

const humanRoutes = () =>
  registeredRoutes().filter((r) => ![AGENT_ROUTES, CI_ROUTES, PUBLIC_ROUTES].some((set) => set.has(`${r.method} ${r.path}`)));

describe("the route table", () => {
  it("has every human decision, its challenge, sign-out and every page among the routes agents may not call", () => {
    const human = humanRoutes().map((r) => `${r.method} ${r.path}`);
    for (const op of ["review", "consent", "apply-approval", "verified-close"])
      for (const suffix of ["", "/challenge"]) expect(human).toContain(`POST /api/runs/:runId/pairs/:planner/${op}${suffix}`);
    for (const p of ["/api/runs/:runId/stops", "/api/runs/:runId/stops/lift"])
      for (const suffix of ["", "/challenge"]) expect(human).toContain(`POST ${p}${suffix}`);
    expect(human).toEqual(
      expect.arrayContaining([
        "POST /signout",
        "GET /",
        "GET /runs/:runId",
        "GET /runs/:runId/pairs/:planner",
        "GET /runs/:runId/pairs/:planner/revisions/:revision",
      ]),
    );
  });

  it("lists in the allowed sets only routes that exist (a renamed route cannot stay allowed by a stale entry)", () => {
    const all = new Set(registeredRoutes().map((r) => `${r.method} ${r.path}`));
    for (const r of [...AGENT_ROUTES, ...CI_ROUTES, ...PUBLIC_ROUTES]) expect(all, r).toContain(r);
  });
});

describe("an agent token holding all five scopes", () => {
  it("is refused 403 AGENT_FORBIDDEN on every other route, with nothing recorded", async () => {
    const before = (await w.store.list())[0]?.revision;
    const human = humanRoutes();
    expect(human.length).toBeGreaterThanOrEqual(15);
    for (const r of human) {
      const res = await call(w, concrete(r.path), { method: r.method, token, ...(r.method === "POST" ? { json: {} } : {}) });
      const body = (await res.json()) as { code: string };
      expect([r.method, r.path, res.status, body.code]).toEqual([r.method, r.path, 403, "AGENT_FORBIDDEN"]);
    }
    expect((await w.store.list())[0]?.revision).toBe(before);
  });

  it("is refused on a decision even with a well-formed decision body, a CSRF header and the current hash", async () => {
    const hash = (
      (await jsonOf(await call(w, apiOf(w).run, { token }))).body.state as { workflows: Record<string, { handoff: { hash: string } }> }
    ).workflows[PLANNER]?.handoff.hash;
    for (const url of [`${apiOf(w).review}/challenge`, apiOf(w).review]) {
      const res = await jsonOf(
        await call(w, url, {
          token,
          csrf: "guess",
          json: { handoff_hash: hash, decision: "approved", challenge_id: "x", assertion: "{}" },
        }),
      );
      expect([res.status, res.body.code]).toEqual([403, "AGENT_FORBIDDEN"]);
    }
  });

  it("is refused the CI routes by its scope (the export scope is CI's alone)", async () => {
    for (const r of CI_ROUTES) {
      const [method, p] = r.split(" ") as [string, string];
      const res = await jsonOf(await call(w, concrete(p), { method, token }));
      expect([r, res.status, res.body.code]).toEqual([r, 403, "TOKEN_SCOPE"]);
    }
  });

  it("reaches the agent operations of its own run", async () => {
    for (const [url, init] of [
      [apiOf(w).run, {}],
      [apiOf(w).pair, {}],
      [apiOf(w).plan, {}],
      [apiOf(w).admission, { json: {} }],
    ] as const) {
      const res = await call(w, url, { token, ...init });
      expect([url, res.status]).toEqual([url, 200]);
    }
  });

  it("lists only its own run", async () => {
    const listed = await jsonOf(await call(w, "/api/runs", { token }));
    expect((listed.body.runs as Array<{ run_id: string }>).map((r) => r.run_id)).toEqual([w.runId]);
  });

  it("gets no Set-Cookie on any API response", async () => {
    for (const url of ["/api/runs", apiOf(w).run, apiOf(w).plan])
      expect((await call(w, url, { token })).headers.getSetCookie()).toEqual([]);
  });
});

describe("an anonymous request", () => {
  it("is refused 401 SIGN_IN on every route but sign-in, enrolment, assets and discovery", async () => {
    for (const r of registeredRoutes()) {
      if (PUBLIC_ROUTES.has(`${r.method} ${r.path}`)) continue;
      const res = await call(w, concrete(r.path), { method: r.method, ...(r.method === "POST" ? { json: {} } : {}) });
      const body = (await res.json()) as { code: string };
      expect([r.method, r.path, res.status, body.code]).toEqual([r.method, r.path, 401, "SIGN_IN"]);
    }
  });

  it("reaches the public routes", async () => {
    expect((await call(w, "/healthz")).status).toBe(200);
    expect((await call(w, "/openapi.json")).status).toBe(200);
    expect((await call(w, "/signin")).status).toBe(200);
    expect((await call(w, "/assets/twinlock.css")).status).toBe(200);
    expect((await call(w, "/assets/htmx.min.js")).status).toBe(200);
    expect((await call(w, "/signin/options", { method: "POST" })).status).toBe(200);
    // An unknown invitation is refused by name, not by a sign-in wall.
    expect((await jsonOf(await call(w, "/enrol/not-a-real-invitation/options", { method: "POST" }))).status).toBe(409);
  });

  it("gets the sign-in page, not JSON, when a browser opens a page", async () => {
    const res = await call(w, "/", { headers: { accept: "text/html" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await res.text()).toContain('href="/signin"');
  });
});

describe("token restrictions", () => {
  it("refuses an operation outside the token's scopes with 403 TOKEN_SCOPE", async () => {
    const { token: readOnly } = await createAgentToken(w.home, { agent: "reader", runId: w.runId, scopes: ["status"] });
    expect((await jsonOf(await call(w, apiOf(w).run, { token: readOnly }))).status).toBe(200);
    for (const [url, init] of [
      [apiOf(w).plan, {}],
      [apiOf(w).freeze, { json: {} }],
      [apiOf(w).admission, { json: {} }],
      [apiOf(w).result, { json: { result: "abandoned" } }],
    ] as const) {
      const res = await jsonOf(await call(w, url, { token: readOnly, ...init }));
      expect([url, res.status, res.body.code]).toEqual([url, 403, "TOKEN_SCOPE"]);
    }
  });

  it("refuses another run with 403 TOKEN_RUN, and lists none of it", async () => {
    const { token: other } = await createAgentToken(w.home, { agent: "elsewhere", runId: "run_00000000000000aa" });
    for (const url of [apiOf(w).run, apiOf(w).pair, apiOf(w).plan]) {
      const res = await jsonOf(await call(w, url, { token: other }));
      expect([url, res.status, res.body.code]).toEqual([url, 403, "TOKEN_RUN"]);
    }
    const freeze = await jsonOf(await call(w, apiOf(w).freeze, { token: other, json: {} }));
    expect([freeze.status, freeze.body.code]).toEqual([403, "TOKEN_RUN"]);
    expect((await jsonOf(await call(w, "/api/runs", { token: other }))).body.runs).toEqual([]);
  });

  it("refuses another pair with 403 TOKEN_PAIR when the token names a planner", async () => {
    const { token: pairToken } = await createAgentToken(w.home, { agent: "other-planner", runId: w.runId, planner: "MD-31" });
    for (const [url, init] of [
      [apiOf(w).pair, {}],
      [apiOf(w).plan, {}],
      [apiOf(w).freeze, { json: {} }],
      [apiOf(w).admission, { json: {} }],
    ] as const) {
      const res = await jsonOf(await call(w, url, { token: pairToken, ...init }));
      expect([url, res.status, res.body.code]).toEqual([url, 403, "TOKEN_PAIR"]);
    }
  });

  it("refuses a revoked token with 401 at once", async () => {
    const made = await createAgentToken(w.home, { agent: "soon-revoked", runId: w.runId });
    expect((await call(w, apiOf(w).run, { token: made.token })).status).toBe(200);
    await revokeAgentToken(w.home, made.record.id);
    const res = await jsonOf(await call(w, apiOf(w).run, { token: made.token }));
    expect([res.status, res.body.code]).toEqual([401, "BAD_TOKEN"]);
    expect(res.body.message).toContain("revoked");
  });

  it("forgets the planner key a revoked token was made with: the home keeps no key nothing can use", async () => {
    const made = await createAgentToken(w.home, {
      agent: "keyed",
      runId: w.runId,
      freezeKey: createPrivateKey(generateReviewerKey().privatePem),
    });
    const keyFile = path.join(w.home.dir, "tokens", `${made.record.id}.key`);
    expect(existsSync(keyFile)).toBe(true);
    await revokeAgentToken(w.home, made.record.id);
    expect(existsSync(keyFile)).toBe(false);
    expect(existsSync(path.join(w.home.dir, "tokens", `${made.record.id}.json`))).toBe(true);
  });

  it("refuses an expired token with 401", async () => {
    const made = await createAgentToken(w.home, { agent: "old", runId: w.runId, expiresInDays: 1 }, new Date(Date.now() - 2 * 86_400_000));
    const res = await jsonOf(await call(w, apiOf(w).run, { token: made.token }));
    expect([res.status, res.body.code]).toEqual([401, "BAD_TOKEN"]);
    expect(res.body.message).toContain("expired");
  });

  it("refuses a token whose secret was altered, even keeping its ID", async () => {
    const tampered = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    const res = await jsonOf(await call(w, apiOf(w).run, { token: tampered }));
    expect([res.status, res.body.code]).toEqual([401, "BAD_TOKEN"]);
  });

  it("refuses a malformed Authorization header with 401 instead of treating the caller as anonymous", async () => {
    for (const auth of [
      `Basic ${Buffer.from("a:b").toString("base64")}`,
      "Bearer",
      `Bearer ${token} extra`,
      `bearer ${token}`,
      `Bearer  ${token}`,
      "",
    ]) {
      const res = await jsonOf(await call(w, "/healthz", { headers: { authorization: auth } }));
      expect([auth, res.status, res.body.code]).toEqual([auth, 401, "BAD_TOKEN"]);
    }
  });
});

describe("properties", () => {
  it("no arbitrary bearer string authorizes anything", async () => {
    const tokenLike = fc
      .tuple(fc.stringMatching(/^[0-9a-f]{16}$/), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/))
      .map(([id, tail]) => `tl_${id}_${tail}`);
    // The real token's ID with any other secret: the stored hash decides.
    const sameId = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((tail) => `${token.slice(0, 20)}${tail}`);
    const printable = fc.stringMatching(/^[\x21-\x7e]{1,120}$/);
    await fc.assert(
      fc.asyncProperty(fc.oneof(tokenLike, sameId, printable), async (secret) => {
        fc.pre(secret !== token);
        const res = await call(w, apiOf(w).run, { token: secret });
        expect(res.status).toBe(401);
      }),
      { numRuns: 150 },
    );
  });

  it("every Host outside the server's own is refused 421 before anything else", async () => {
    const hosts = fc.oneof(
      fc.domain(),
      fc.domain().map((d) => `${d}:7420`),
      fc.ipV4().map((ip) => `${ip}:7420`),
      fc.integer({ min: 1, max: 65535 }).map((p) => `localhost:${p}`),
      fc.constantFrom("localhost", "127.0.0.1:7420", "localhost.:7420", "localhost:7420.evil.example", "evil.example"),
    );
    await fc.assert(
      fc.asyncProperty(hosts, async (host) => {
        fc.pre(host.toLowerCase() !== TEST_HOST);
        const res = await call(w, apiOf(w).run, { token, headers: { host } });
        expect(res.status).toBe(421);
        expect(((await res.json()) as { code: string }).code).toBe("WRONG_HOST");
      }),
      { numRuns: 150 },
    );
  });
});
