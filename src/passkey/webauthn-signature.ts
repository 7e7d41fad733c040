import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { WebAuthnSignature } from "../run/webauthn-signature-schema.js";

/** The field's schema and type are the run record's (src/run/webauthn-signature-schema.ts): run/ imports no passkey code. */
export { type WebAuthnSignature, WebAuthnSignatureSchema } from "../run/webauthn-signature-schema.js";

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
