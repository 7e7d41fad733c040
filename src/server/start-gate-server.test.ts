import { request } from "node:https";
import { afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import type { RunStore } from "../store/run-store.js";
import { removeServerWorlds, serverTempDir, serverWorld } from "../test-support/gate-server-fixture.js";
import { selfSignedCertificate } from "../test-support/self-signed-certificate.js";
import { createAgentToken } from "./agent-tokens.js";
import { isLoopback, parseListen, type RunningGateServer, startGateServer } from "./start-gate-server.js";

const running: RunningGateServer[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
  removeServerWorlds();
});

async function start(options: Parameters<typeof startGateServer>[0]): Promise<RunningGateServer> {
  const s = await startGateServer(options);
  running.push(s);
  return s;
}

describe("listening", () => {
  it("binds loopback by default and answers on localhost and 127.0.0.1, refusing other Host names", async () => {
    const w = await serverWorld();
    const s = await start({ store: w.store, listen: "127.0.0.1:0" });
    expect(s.origin).toBe(`http://localhost:${s.port}`);
    expect((await fetch(`http://127.0.0.1:${s.port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://localhost:${s.port}/healthz`)).status).toBe(200);
    const page = await (await fetch(`http://127.0.0.1:${s.port}/signin`)).text();
    expect(page).not.toContain("banner-insecure");
  });

  it("refuses a network address without TLS, naming --tls-cert and --insecure-http", async () => {
    const w = await serverWorld();
    const refused = startGateServer({ store: w.store, listen: "0.0.0.0:0" });
    await expect(refused).rejects.toThrow(UsageError);
    await expect(startGateServer({ store: w.store, listen: "0.0.0.0:0" })).rejects.toThrow(
      /--tls-cert FILE --tls-key FILE.*--insecure-http/,
    );
  });

  it("refuses a TLS certificate without its key, and an origin that is not one", async () => {
    const w = await serverWorld();
    await expect(startGateServer({ store: w.store, listen: "127.0.0.1:0", tlsCert: "/nonexistent.pem" })).rejects.toThrow(/go together/);
    await expect(startGateServer({ store: w.store, listen: "127.0.0.1:0", origin: "https://gate.example/path" })).rejects.toThrow(
      /--origin/,
    );
  });

  it("over TLS on a network address: HSTS, and cookies marked Secure", async () => {
    const w = await serverWorld();
    const dir = serverTempDir();
    const { cert, key } = selfSignedCertificate(dir);
    const s = await start({ store: w.store, listen: "0.0.0.0:0", tlsCert: cert, tlsKey: key });
    expect(s.url).toBe(`https://0.0.0.0:${s.port}`);
    const answer = await new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
      const r = request(`${s.url}/signin/options`, { method: "POST", rejectUnauthorized: false }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      });
      r.on("error", reject);
      r.end();
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["strict-transport-security"]).toBe("max-age=31536000");
    expect(String(answer.headers["set-cookie"])).toMatch(/; Secure/);
  });

  it("with --insecure-http on a network address, says so on every page", async () => {
    const w = await serverWorld();
    const s = await start({ store: w.store, listen: "0.0.0.0:0", insecureHttp: true });
    const html = await (await fetch(`http://0.0.0.0:${s.port}/signin`)).text();
    expect(html).toContain('class="banner banner-insecure"');
    expect(html).toContain("--insecure-http");
    const refusal = await fetch(`http://0.0.0.0:${s.port}/`, { headers: { accept: "text/html" } });
    expect(refusal.status).toBe(401);
    expect(await refusal.text()).toContain("banner-insecure");
  });

  it("parses HOST:PORT and knows loopback addresses", () => {
    expect(parseListen("127.0.0.1:7420")).toEqual({ host: "127.0.0.1", port: 7420 });
    expect(parseListen("[::1]:0")).toEqual({ host: "::1", port: 0 });
    for (const bad of ["7420", "localhost", "127.0.0.1:99999", "http://x:1", ":7420"])
      expect(() => parseListen(bad), bad).toThrow(UsageError);
    for (const host of ["localhost", "127.0.0.1", "127.9.9.9", "::1"]) expect(isLoopback(host)).toBe(true);
    for (const host of ["0.0.0.0", "10.0.0.1", "::", "localhost.evil.example"]) expect(isLoopback(host)).toBe(false);
  });
});

describe("closing", () => {
  it("finishes the request in flight, then stops taking connections", async () => {
    const w = await serverWorld();
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: RunStore = {
      ...w.store,
      list: async () => {
        entered();
        await held;
        return w.store.list();
      },
    };
    const s = await startGateServer({ store: slow, listen: "127.0.0.1:0" });
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    const inFlight = fetch(`${s.url}/api/runs`, { headers: { authorization: `Bearer ${token}` } });
    await inside;
    let closed = false;
    const closing = s.close().then(() => {
      closed = true;
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(closed).toBe(false);
    release();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { runs: Array<{ run_id: string }> }).runs.map((r) => r.run_id)).toEqual([w.runId]);
    await closing;
    expect(closed).toBe(true);
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
  });
});
