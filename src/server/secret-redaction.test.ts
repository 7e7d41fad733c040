import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openGateHome } from "../home/gate-home.js";
import { postgresRunStore } from "../store/postgres/postgres-run-store.js";
import { call, removeServerWorlds, reviewerFor, serverWorld, TEST_HOST, TEST_ORIGIN } from "../test-support/gate-server-fixture.js";
import { type AccessLogEntry, createGateApp } from "./create-gate-app.js";

afterEach(() => removeServerWorlds());

const SECRET = "s3cr3tPw";

describe("the gate server's answers and log during a database outage", () => {
  it("never carry the store's password, in the ?password= or the user:password@ form, on any route, /readyz included", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-redact-"));
    // Port 1 on loopback: nothing listens there, so the database is "down" from the first query.
    for (const url of [
      `postgres://gate@127.0.0.1:1/twinlock?password=${SECRET}&sslpassword=${SECRET}`,
      `postgresql://gate:${SECRET}@127.0.0.1:1/twinlock`,
    ]) {
      const store = postgresRunStore(url, openGateHome(path.join(dir, "home"), { create: true }));
      const logs: AccessLogEntry[] = [];
      const { app } = createGateApp({
        store,
        origin: TEST_ORIGIN,
        allowedHosts: [TEST_HOST],
        tls: false,
        insecureHttp: false,
        log: (e) => logs.push(e),
      });
      try {
        const texts: string[] = [];
        for (const [route, accept] of [
          ["/readyz", "application/json"],
          ["/api/runs/run_0123456789abcdef", "application/json"],
          ["/runs/run_0123456789abcdef", "text/html"],
          ["/no/such/route", "application/json"],
          ["/healthz", "application/json"],
        ] as const) {
          const r = await app.request(`${TEST_ORIGIN}${route}`, { headers: { host: TEST_HOST, accept } });
          texts.push(`${r.status} ${await r.text()}`);
        }
        expect(texts.join("\n")).not.toContain(SECRET);
        expect(texts.some((t) => t.startsWith("503"))).toBe(true);
        expect(JSON.stringify(logs)).not.toContain(SECRET);
        expect(store.label).not.toContain(SECRET);
      } finally {
        await store.close();
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("the folder store's answers", () => {
  it("name the gate home without spelling out its path, even to a signed-in reviewer asking for an unknown run", async () => {
    const w = await serverWorld();
    const r = await reviewerFor(w, "alice");
    const answer = await call(w, "/api/runs/run_0123456789abcdef", { cookie: r.cookie });
    const text = await answer.text();
    expect(answer.status).toBe(404);
    expect(text).toContain("the gate home");
    expect(text).not.toContain(w.home.dir);
  });
});
