import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { signDelivery, verifyDelivery } from "./sign-delivery.js";
import { newWebhookSecret } from "./webhook.js";

/**
 * The Standard Webhooks test vector, from the specification's own reference
 * libraries: standard-webhooks/standard-webhooks, libraries/go/webhook_test.go
 * (TestWebhookSign, commit 449485c), the same key, ID, timestamp and payload
 * every language's tests sign.
 */
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

describe("signing a delivery (Standard Webhooks)", () => {
  it("gives the specification's test vector signature, and the three headers it names", () => {
    const headers = signDelivery(VECTOR.secret, VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.payload);
    expect(headers).toEqual({
      "webhook-id": VECTOR.id,
      "webhook-timestamp": String(VECTOR.timestamp),
      "webhook-signature": VECTOR.signature,
    });
  });

  it("signs what the specification says: base64 HMAC-SHA256 of id.timestamp.body under the base64-decoded key", () => {
    const key = Buffer.from(VECTOR.secret.slice("whsec_".length), "base64");
    const mac = createHmac("sha256", key).update(`${VECTOR.id}.${VECTOR.timestamp}.${VECTOR.payload}`).digest("base64");
    expect(`v1,${mac}`).toBe(VECTOR.signature);
  });

  it("verifies with the package's verifier, and refuses a changed body, ID, timestamp or secret", () => {
    const secret = newWebhookSecret();
    const body = '{"type":"twinlock.plan.review_waiting"}';
    const h = signDelivery(secret, "msg_1", new Date(), body);
    expect(verifyDelivery(secret, body, { ...h })).toEqual({ type: "twinlock.plan.review_waiting" });
    expect(() => verifyDelivery(secret, `${body} `, { ...h })).toThrow();
    expect(() => verifyDelivery(secret, body, { ...h, "webhook-id": "msg_2" })).toThrow();
    expect(() => verifyDelivery(secret, body, { ...h, "webhook-timestamp": String(Number(h["webhook-timestamp"]) + 1) })).toThrow();
    expect(() => verifyDelivery(newWebhookSecret(), body, { ...h })).toThrow();
    // A delivery replayed long after it was signed is refused by the receiver's tolerance.
    const old = signDelivery(secret, "msg_1", new Date(Date.now() - 3_600_000), body);
    expect(() => verifyDelivery(secret, body, { ...old })).toThrow(/too old/);
  });

  it("verifies every signed body and refuses it with any one character changed (property)", () => {
    const secret = newWebhookSecret();
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), fc.nat(), (text, at) => {
        const body = JSON.stringify({ text });
        const h = signDelivery(secret, "msg_p", new Date(), body);
        expect(() => verifyDelivery(secret, body, { ...h })).not.toThrow();
        const i = at % body.length;
        const changed = `${body.slice(0, i)}${body[i] === "x" ? "y" : "x"}${body.slice(i + 1)}`;
        expect(() => verifyDelivery(secret, changed, { ...h })).toThrow();
      }),
      { numRuns: 200 },
    );
  });
});
