import "../schemas/zod-setup.js";
import { z } from "zod/mini";
import { lazySchema } from "../schemas/lazy-schema.js";

/** A passkey's public key line starts with this (an Ed25519 key's with `ed25519:`). */
export const WEBAUTHN_KEY_PREFIX = "webauthn:";

const base64url = (max: number) =>
  z.string().check(z.minLength(1), z.maxLength(max), z.regex(/^[A-Za-z0-9_-]+$/, "base64url without padding"));

/**
 * A receipt's passkey signature field: the assertion of a WebAuthn credential
 * whose challenge is `receiptChallenge(receipt)`. `value` is the assertion
 * signature in base64 (like an Ed25519 signature's); the other byte fields
 * are base64url as the browser sends them. Limits fit RSA-4096 keys.
 */
export const WebAuthnSignatureSchema = lazySchema("webauthn-signature.WebAuthnSignatureSchema", () =>
  z.strictObject({
    kind: z.literal("webauthn"),
    public_key: z.string().check(
      z.maxLength(1600),
      z.refine((s) => s.startsWith(WEBAUTHN_KEY_PREFIX), `starts with ${WEBAUTHN_KEY_PREFIX}`),
    ),
    signer: z.string().check(z.minLength(1), z.maxLength(200)),
    value: z.string().check(z.minLength(1), z.maxLength(700), z.regex(/^[A-Za-z0-9+/]+={0,2}$/, "base64")),
    credential_id: base64url(1400),
    authenticator_data: base64url(4096),
    client_data_json: base64url(4096),
  }),
);

/** A receipt's passkey signature field. */
export type WebAuthnSignature = z.infer<typeof WebAuthnSignatureSchema>;
