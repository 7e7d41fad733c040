import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { preAuthEncoding, signDsseEnvelope, verifyDsseEnvelope } from "./dsse-envelope.js";

/** The DSSE protocol's own test case, pinned with its source commit. */
const VECTOR = JSON.parse(readFileSync(new URL("./fixtures/dsse-protocol-vector.json", import.meta.url), "utf8")) as {
  payloadType: string;
  payload_utf8: string;
  pae_utf8: string;
  key: { x: string; y: string; d: string };
  envelope: { payload: string; payloadType: string; signatures: Array<{ sig: string }> };
};

const b64url = (decimal: string) => Buffer.from(BigInt(decimal).toString(16).padStart(64, "0"), "hex").toString("base64url");
const jwk = { kty: "EC", crv: "P-256", x: b64url(VECTOR.key.x), y: b64url(VECTOR.key.y) };
const vectorPublic = createPublicKey({ key: jwk, format: "jwk" });
const vectorPrivate = createPrivateKey({ key: { ...jwk, d: b64url(VECTOR.key.d) }, format: "jwk" });
const keys = new Map([["vector", vectorPublic]]);

describe("DSSE envelopes", () => {
  it("encodes the PAE exactly as the DSSE test vector", () => {
    expect(preAuthEncoding(VECTOR.payloadType, Buffer.from(VECTOR.payload_utf8)).toString("utf8")).toBe(VECTOR.pae_utf8);
  });

  it("verifies the DSSE test vector's envelope under its P-256 key", () => {
    const v = verifyDsseEnvelope(VECTOR.envelope, keys);
    expect(v).toMatchObject({ ok: true, payloadType: VECTOR.payloadType, signers: ["vector"] });
    expect(v.ok && v.payload.toString("utf8")).toBe(VECTOR.payload_utf8);
  });

  it("refuses the test vector after a one-byte change of its payload, type or signature", () => {
    const payload = { ...VECTOR.envelope, payload: Buffer.from("hello worle").toString("base64") };
    const type = { ...VECTOR.envelope, payloadType: "http://example.com/HelloWorle" };
    const sig = Buffer.from(VECTOR.envelope.signatures[0]?.sig ?? "", "base64");
    sig[10] = (sig[10] as number) ^ 1;
    const signature = { ...VECTOR.envelope, signatures: [{ sig: sig.toString("base64") }] };
    for (const bad of [payload, type, signature]) expect(verifyDsseEnvelope(bad, keys).ok).toBe(false);
  });

  it("signs with the vector's private key so that the vector's public key verifies", () => {
    const e = signDsseEnvelope(VECTOR.payloadType, Buffer.from(VECTOR.payload_utf8), vectorPrivate);
    expect(e.payload).toBe(VECTOR.envelope.payload);
    expect(verifyDsseEnvelope(e, keys).ok).toBe(true);
  });

  it("round-trips any payload under Ed25519 and refuses any one-byte change of it", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const mine = new Map([["me", publicKey]]);
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), fc.nat(), (bytes, at) => {
        const e = signDsseEnvelope("application/vnd.in-toto+json", bytes, privateKey);
        expect(verifyDsseEnvelope(e, mine).ok).toBe(true);
        const changed = Buffer.from(bytes);
        const i = at % changed.length;
        changed[i] = (changed[i] as number) ^ 0xff;
        expect(verifyDsseEnvelope({ ...e, payload: changed.toString("base64") }, mine).ok).toBe(false);
      }),
      { numRuns: 50 },
    );
  });

  it("never throws on something that is not an envelope", () => {
    for (const bad of [
      null,
      1,
      "x",
      {},
      { payload: "%%", payloadType: "t", signatures: [] },
      { payload: "", payloadType: "t", signatures: [{}] },
    ])
      expect(verifyDsseEnvelope(bad, keys).ok).toBe(false);
  });
});
