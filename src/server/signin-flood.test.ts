import { afterEach, describe, expect, it } from "vitest";
import {
  cookieFrom,
  enrol,
  removeServerWorlds,
  rpOf,
  type ServerWorld,
  serverWorld,
  TEST_HOST,
  TEST_ORIGIN,
} from "../test-support/gate-server-fixture.js";
import { clientAddress, clientKey } from "./client-address.js";
import { PendingSignatures } from "./pending-signatures.js";
import { startGateServer } from "./start-gate-server.js";

afterEach(() => removeServerWorlds());

/** A request to the app as if from `address` (the socket's peer), with extra headers. */
function from(w: ServerWorld, address: string, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("host", TEST_HOST);
  return Promise.resolve(w.app.request(`${TEST_ORIGIN}${url}`, { ...init, headers }, { incoming: { socket: { remoteAddress: address } } }));
}

describe("a flood of anonymous sign-in starts", () => {
  it("from 40 loopback addresses, 1,200 starts leave a reviewer's pending sign-in to complete", async () => {
    const w = await serverWorld();
    const auth = await enrol(w, "alice");
    const mine = await from(w, "127.0.0.1", "/signin/options", { method: "POST" });
    const cookie = cookieFrom(mine, "twinlock_signin") as string;
    const { challenge } = ((await mine.json()) as { options: { challenge: string } }).options;
    for (let i = 0; i < 1200; i++) await (await from(w, `127.0.${i % 40}.${1 + (i % 200)}`, "/signin/options", { method: "POST" })).text();
    const signed = await from(w, "127.0.0.1", "/signin", {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify({ response: auth.assert(challenge, rpOf(w)) }),
    });
    expect(signed.status, await signed.clone().text()).toBe(200);
    expect(cookieFrom(signed, "twinlock_session")).toBeDefined();
  });

  it("takes a sealed sign-in challenge once: the same cookie and answer cannot sign in twice", async () => {
    const w = await serverWorld();
    const auth = await enrol(w, "alice");
    const started = await from(w, "127.0.0.1", "/signin/options", { method: "POST" });
    const cookie = cookieFrom(started, "twinlock_signin") as string;
    const { challenge } = ((await started.json()) as { options: { challenge: string } }).options;
    const body = JSON.stringify({ response: auth.assert(challenge, rpOf(w)) });
    const post = () => from(w, "127.0.0.1", "/signin", { method: "POST", headers: { "content-type": "application/json", cookie }, body });
    expect((await post()).status).toBe(200);
    const again = await post();
    expect(again.status).toBe(409);
    // Nor is the used seal taken again when spelled another way (base64url read leniently: padding, spare bits).
    const [sealBody, mac] = cookie.split(".") as [string, string];
    const last = mac.at(-1) as string;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const spareBits = alphabet[alphabet.indexOf(last) ^ 1] as string;
    for (const respelled of [`${mac}=`, `${mac}==`, `${mac.slice(0, -1)}${spareBits}`]) {
      const replayed = await from(w, "127.0.0.1", "/signin", {
        method: "POST",
        headers: { "content-type": "application/json", cookie: `${sealBody}.${respelled}` },
        body,
      });
      expect(replayed.status, respelled).toBe(409);
    }
    // A seal changed by one character is not the server's.
    const forged = `${cookie.slice(0, -2)}${cookie.endsWith("A") ? "B" : "A"}${cookie.slice(-1)}`;
    const r = await from(w, "127.0.0.1", "/signin", {
      method: "POST",
      headers: { "content-type": "application/json", cookie: forged },
      body,
    });
    expect(r.status).toBe(409);
  });
});

describe("decisions waiting for a passkey", () => {
  it("keep each reviewer's own slots: 1,100 of bob's pending decisions do not push out alice's", async () => {
    const pending = new PendingSignatures();
    const at = new Date();
    const alice = await pending.add({ reviewer: "alice", request: "r", challenge: Buffer.alloc(32), at }, at.getTime());
    for (let i = 0; i < 1100; i++) await pending.add({ reviewer: "bob", request: "r", challenge: Buffer.alloc(32), at }, at.getTime());
    expect((await pending.take(alice.id, at.getTime()))?.reviewer).toBe("alice");
  });
});

describe("the client address the limits count", () => {
  const trusted = new Set(["10.0.0.5"]);
  it("ignores X-Forwarded-For unless the socket's peer is a configured trusted proxy", () => {
    expect(clientAddress("203.0.113.9", "198.51.100.1", trusted)).toBe("203.0.113.9");
    expect(clientAddress("127.0.0.1", "198.51.100.1", new Set())).toBe("127.0.0.1");
    expect(clientAddress("10.0.0.5", "198.51.100.1", trusted)).toBe("198.51.100.1");
    expect(clientAddress("::ffff:10.0.0.5", "198.51.100.1", trusted)).toBe("198.51.100.1");
  });

  it("takes the address the trusted proxy appended, not what the client wrote before it", () => {
    expect(clientAddress("10.0.0.5", "1.1.1.1, 198.51.100.1", trusted)).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.5", "198.51.100.1, 10.0.0.5", trusted)).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.5", "not-an-address", trusted)).toBe("10.0.0.5");
  });

  it("is configured with serve's --trusted-proxy, which takes only an IP address", async () => {
    const w = await serverWorld();
    await expect(startGateServer({ store: w.store, listen: "127.0.0.1:0", trustedProxies: ["proxy.example"] })).rejects.toThrow(
      /--trusted-proxy "proxy.example" is not an IP address/,
    );
    const running = await startGateServer({ store: w.store, listen: "127.0.0.1:0", trustedProxies: ["127.0.0.1"] });
    await running.close();
  });

  it("counts every loopback address as one client and an IPv6 address by its /64", () => {
    expect(clientKey("127.0.0.1")).toBe("loopback");
    expect(clientKey("127.45.3.9")).toBe("loopback");
    expect(clientKey("::ffff:127.0.0.2")).toBe("loopback");
    expect(clientKey("::1")).toBe("loopback");
    expect(clientKey("2001:db8:1:2:aaaa::1")).toBe(clientKey("2001:db8:1:2:bbbb::9"));
    expect(clientKey("2001:db8:1:2::1")).not.toBe(clientKey("2001:db8:1:3::1"));
  });
});
