import "../schemas/zod-setup.js";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { z } from "zod/mini";
import { lazySchema } from "../schemas/lazy-schema.js";
import { WEBAUTHN_KEY_PREFIX } from "./webauthn-key-line.js";

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

/** The signature field for a receipt from the browser's assertion (`startAuthentication`'s result), the credential's key line and the signer's name. */
export function webauthnSignatureOf(assertion: AuthenticationResponseJSON, publicKey: string, signer: string): WebAuthnSignature {
  return {
    kind: "webauthn",
    public_key: publicKey,
    signer,
    value: Buffer.from(assertion.response.signature, "base64url").toString("base64"),
    credential_id: assertion.rawId,
    authenticator_data: assertion.response.authenticatorData,
    client_data_json: assertion.response.clientDataJSON,
  };
}
