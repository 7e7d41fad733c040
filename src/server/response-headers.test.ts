/**
 * What every response carries (the strict CSP, nosniff, no framing), how
 * the session cookie is set, and what the access log may hold: a method,
 * a path, a status and who asked, never a token, a cookie, an invitation
 * or a CSRF token, which an agent able to read the server's log could use.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createInvitation } from "../passkey/passkey-enrolment.js";
import {
  apiOf,
  call,
  cookieFrom,
  decide,
  hashNow,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
} from "../test-support/gate-server-fixture.js";
import { createAgentToken } from "./agent-tokens.js";
import { CONTENT_SECURITY_POLICY } from "./request-guards.js";

afterEach(removeServerWorlds);

async function world(o: Parameters<typeof serverWorld>[0] = {}): Promise<{ w: ServerWorld; token: string }> {
  const w = await serverWorld(o);
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
  expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
  return { w, token };
}

describe("security headers", () => {
  it("are on every kind of response: page, API, asset, discovery, refusal and not-found", async () => {
    const { w, token } = await world();
    const alice = await reviewerFor(w, "alice");
    const responses = [
      await call(w, "/", { cookie: alice.cookie }),
      await call(w, `/runs/${w.runId}`, { cookie: alice.cookie }),
      await call(w, "/signin"),
      await call(w, apiOf(w).run, { token }),
      await call(w, "/assets/twinlock.js"),
      await call(w, "/openapi.json"),
      await call(w, "/", { headers: { accept: "text/html" } }),
      await call(w, "/nothing-here"),
      await call(w, "/healthz", { headers: { host: "evil.example" } }),
      await call(w, apiOf(w).review, { token, json: {} }),
    ];
    for (const r of responses) {
      expect(r.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(r.headers.get("referrer-policy")).toBe("no-referrer");
      expect(r.headers.get("strict-transport-security")).toBeNull();
    }
  });

  it("the CSP allows only this server's own scripts, styles and requests, and no framing", () => {
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
  });

  it("pages and API answers are not cached; assets are revalidated", async () => {
    const { w, token } = await world();
    expect((await call(w, apiOf(w).run, { token })).headers.get("cache-control")).toBe("no-store");
    expect((await call(w, "/assets/twinlock.css")).headers.get("cache-control")).toBe("no-cache");
  });
});

describe("cookies", () => {
  it("the session cookie is HttpOnly, SameSite=Strict and path /, and not Secure over plain HTTP on loopback", async () => {
    const { w } = await world();
    const alice = await reviewerFor(w, "alice");
    expect(alice.cookie).toMatch(/^twinlock_session=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{22}$/);
    const options = await call(w, "/signin/options", { method: "POST" });
    const line = options.headers.getSetCookie().find((c) => c.startsWith("twinlock_signin=")) as string;
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Strict/);
    expect(line).not.toMatch(/; Secure/);
  });

  it("are also Secure, the session a __Host- cookie, with HSTS on every response, when served over TLS", async () => {
    const origin = "https://localhost:7420";
    const w = await serverWorld({ config: { tls: true, origin } });
    const options = await call(w, "/signin/options", { method: "POST", headers: { origin } });
    expect(options.headers.get("strict-transport-security")).toBe("max-age=31536000");
    expect(options.headers.getSetCookie()[0]).toMatch(/; Secure/);
    const { signIn, enrol } = await import("../test-support/gate-server-fixture.js");
    const auth = await enrol(w, "alice");
    const signin = await call(w, "/signin/options", { method: "POST" });
    const pending = cookieFrom(signin, "twinlock_signin") as string;
    const { challenge } = ((await signin.json()) as { options: { challenge: string } }).options;
    const r = await call(w, "/signin", { json: { response: auth.assert(challenge, { rpId: "localhost", origin }) }, cookie: pending });
    expect(r.status).toBe(200);
    // A __Host- cookie: Secure, Path=/ and no Domain, so no other host (nor a plain-HTTP page) can set or read it.
    const session = r.headers.getSetCookie().find((c) => c.startsWith("__Host-twinlock_session=")) as string;
    for (const flag of ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"]) expect(session).toContain(`; ${flag}`);
    expect(session).not.toMatch(/; Domain=/i);
    expect((await signIn(w, "alice", auth)).csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("no API response to an agent sets a cookie, refusals included", async () => {
    const { w, token } = await world();
    for (const [url, init] of [
      ["/api/runs", {}],
      [apiOf(w).pair, {}],
      [apiOf(w).admission, { json: {} }],
      [apiOf(w).freeze, { json: {} }],
      [apiOf(w).review, { json: {} }],
    ] as const)
      expect((await call(w, url, { token, ...init })).headers.getSetCookie()).toEqual([]);
  });
});

describe("the access log", () => {
  it("has one line per request with method, path, status and who, and no secret anywhere", async () => {
    const { w, token } = await world();
    const alice = await reviewerFor(w, "alice");
    const invitation = await createInvitation(w.home, "bob", ["review"]);
    await call(w, `/enrol/${invitation.token}`);
    await call(w, `/enrol/${invitation.token}/options`, { method: "POST" });
    await call(w, `${apiOf(w).plan}?revision=1&token=${token}`, { token });
    await decide(w, alice, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback: "secret feedback text" });
    await call(w, apiOf(w).run, { token: `${token.slice(0, -2)}xx` });

    const text = w.logs.map((e) => JSON.stringify(e)).join("\n");
    const sessionId = alice.cookie.split("=")[1] as string;
    // The token's secret is everything after "tl_<id>_": it may itself hold "_", so a split would test a fragment of
    // it, short enough to turn up anywhere in the log by chance.
    const tokenSecret = token.slice(token.indexOf("_", 3) + 1);
    expect(tokenSecret.length).toBeGreaterThanOrEqual(43);
    for (const secret of [token, tokenSecret, sessionId, alice.csrf, invitation.token, "secret feedback text"])
      expect(text.includes(secret), `the log holds ${secret.slice(0, 8)}… ${secret === invitation.token ? "(the invitation)" : ""}`).toBe(
        false,
      );
    expect(w.logs.length).toBeGreaterThan(8);
    for (const e of w.logs) expect(Object.keys(e).sort()).toEqual(expect.arrayContaining(["at", "method", "path", "status", "ms", "who"]));
    expect(w.logs).toContainEqual(
      expect.objectContaining({ method: "POST", path: apiOf(w).freeze, status: 200, who: "agent:planner-agent" }),
    );
    expect(w.logs).toContainEqual(expect.objectContaining({ path: apiOf(w).review, status: 200, who: "reviewer:alice" }));
    expect(w.logs).toContainEqual(expect.objectContaining({ path: apiOf(w).run, status: 401, code: "BAD_TOKEN", who: "-" }));
    // An enrolment link is logged by its route, not by its one-time token.
    expect(w.logs).toContainEqual(expect.objectContaining({ method: "POST", path: "/enrol/:token/options", status: 200 }));
  });
});
