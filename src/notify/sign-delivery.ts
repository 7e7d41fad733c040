import { Webhook as StandardWebhook } from "standardwebhooks";

/** The three headers of a Standard Webhooks delivery. */
export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * The Standard Webhooks headers for one delivery
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
 * `v1,` and base64 HMAC-SHA256 over `id.timestamp.body` under the secret's
 * key, by the `standardwebhooks` package. The ID is the outbox entry's, the
 * same on every retry, so a receiver de-duplicates by it.
 */
export function signDelivery(secret: string, id: string, at: Date, body: string): SignedHeaders {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new StandardWebhook(secret).sign(id, at, body),
  };
}

/** Check a delivery as a receiver would (the package's verifier, with its five-minute tolerance); throws when it does not verify. */
export function verifyDelivery(secret: string, body: string, headers: Record<string, string>): unknown {
  return new StandardWebhook(secret).verify(body, headers);
}
