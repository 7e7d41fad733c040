import { createPublicKey, type KeyObject } from "node:crypto";
import { WEBAUTHN_KEY_PREFIX } from "../run/webauthn-signature-schema.js";

/** Passkey public keys are written `webauthn:<base64 of the SubjectPublicKeyInfo DER>` in receipts and the reviewer registry. */
export { WEBAUTHN_KEY_PREFIX };

/** The signature algorithm a passkey's key type implies (the only one twinlock accepts for it). */
export type WebAuthnAlgorithm = "ES256" | "EdDSA" | "RS256";

/** Smallest RSA modulus accepted: RS256 keys below 2048 bits are refused. */
const MIN_RSA_BITS = 2048;

/** Largest SPKI accepted (an RSA-8192 key is about 1,100 bytes). */
const MAX_SPKI_BYTES = 1200;

/** `webauthn:<base64 SPKI DER>` of a passkey public key (P-256, Ed25519 or RSA); throws for any other key. */
export function webauthnKeyLine(key: KeyObject): string {
  if (key.type !== "public") throw new TypeError("webauthnKeyLine takes a public key");
  if (!webauthnAlgorithmOf(key)) throw new TypeError(`a passkey key must be EC P-256, Ed25519 or RSA ≥ ${MIN_RSA_BITS} bits`);
  // DER, not JWK: exporting a key as JWK can deadlock Node 20's crypto against the garbage collector.
  return `${WEBAUTHN_KEY_PREFIX}${key.export({ type: "spki", format: "der" }).toString("base64")}`;
}

/** The public key and its algorithm of a `webauthn:` line, or undefined when the line is malformed or names a key type twinlock does not accept. */
export function parseWebAuthnKeyLine(line: string): { key: KeyObject; algorithm: WebAuthnAlgorithm } | undefined {
  if (typeof line !== "string" || !line.startsWith(WEBAUTHN_KEY_PREFIX)) return undefined;
  const text = line.slice(WEBAUTHN_KEY_PREFIX.length);
  if (text.length === 0 || text.length > Math.ceil(MAX_SPKI_BYTES / 3) * 4) return undefined;
  const der = Buffer.from(text, "base64");
  // One spelling per key: Node's decoder skips junk, so the text must be exactly the canonical base64 of what it decoded to.
  if (der.toString("base64") !== text) return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: der, format: "der", type: "spki" });
  } catch {
    return undefined;
  }
  const algorithm = webauthnAlgorithmOf(key);
  if (!algorithm) return undefined;
  // One key, one line (revocation and trust compare lines as text): the DER must be the key's own
  // encoding, and a P-256 point must be uncompressed (Node re-exports a compressed point as given).
  if (!key.export({ type: "spki", format: "der" }).equals(der)) return undefined;
  if (algorithm === "ES256" && !(der.length === 91 && der[26] === 0x04)) return undefined;
  return { key, algorithm };
}

/** The algorithm of an accepted passkey key type, or undefined. */
export function webauthnAlgorithmOf(key: KeyObject): WebAuthnAlgorithm | undefined {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === "ec" && details.namedCurve === "prime256v1") return "ES256";
  if (key.asymmetricKeyType === "ed25519") return "EdDSA";
  if (key.asymmetricKeyType === "rsa" && (details.modulusLength ?? 0) >= MIN_RSA_BITS) return "RS256";
  return undefined;
}
