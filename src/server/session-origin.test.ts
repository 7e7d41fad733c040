import { afterEach, describe, expect, it } from "vitest";
import { apiOf, call, editReport, removeServerWorlds, reviewerFor, serverWorld, TEST_HOST } from "../test-support/gate-server-fixture.js";
import { createAgentToken } from "./agent-tokens.js";

afterEach(() => removeServerWorlds());

describe("a reviewer's session is bound to the origin she signed in on", () => {
  it("is refused when her cookie is presented on another port of the same host, as a sibling server would receive it", async () => {
    // One server answering on two ports stands for two servers sharing one store: the cookie goes to both.
    const w = await serverWorld({ config: { allowedHosts: [TEST_HOST, "localhost:7421"] } });
    const alice = await reviewerFor(w, "alice");
    const home = await call(w, "/", { cookie: alice.cookie, headers: { accept: "text/html" } });
    expect(home.status).toBe(200);
    const elsewhere = await call(w, "/api/runs", { cookie: alice.cookie, headers: { host: "localhost:7421" } });
    expect(elsewhere.status).toBe(401);
    const page = await call(w, "/", { cookie: alice.cookie, headers: { host: "localhost:7421", accept: "text/html" } });
    expect(await page.text()).not.toContain(alice.csrf);
    // Her session on its own origin is untouched.
    expect((await call(w, "/api/runs", { cookie: alice.cookie })).status).toBe(200);
  });

  it("is refused when the cookie's session ID is sent without its origin tag", async () => {
    const w = await serverWorld();
    const alice = await reviewerFor(w, "alice");
    const bare = alice.cookie.split(".")[0] as string;
    expect((await call(w, "/api/runs", { cookie: bare })).status).toBe(401);
  });
});

describe("links in the plan's Markdown", () => {
  it("to this machine or another port are shown as text with the address, never as a link", async () => {
    const w = await serverWorld();
    const alice = await reviewerFor(w, "alice");
    editReport(w, "See [the dashboard](http://localhost:9999/steal) and <http://127.0.0.1:7421/> and [docs](https://example.com/ok).");
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
    const page = await (
      await call(w, `/runs/${w.runId}/pairs/MD-29/revisions/1`, { cookie: alice.cookie, headers: { accept: "text/html" } })
    ).text();
    expect(page).not.toMatch(/href="http:\/\/localhost:9999/);
    expect(page).not.toMatch(/href="http:\/\/127\.0\.0\.1:7421/);
    expect(page).toContain("link not followed: http://localhost:9999/steal");
    expect(page).toMatch(/href="https:\/\/example\.com\/ok"/);
  });
});
