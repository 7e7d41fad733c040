import { constants, createHash, type KeyObject, verify } from "node:crypto";
import { receiptChallenge } from "./webauthn-challenge.js";
import { parseWebAuthnKeyLine, type WebAuthnAlgorithm } from "./webauthn-key-line.js";
import type { WebAuthnSignature } from "./webauthn-signature.js";

/** One WebAuthn assertion as bytes, with the `webauthn:` line of the key that should have made it. */
export interface WebAuthnAssertion {
  publicKey: string;
  authenticatorData: Uint8Array;
  clientDataJSON: Uint8Array;
  signature: Uint8Array;
}

/** What the assertion must have been made for: the challenge bytes, the relying party ID and the allowed origins. */
export interface AssertionExpectation {
  challenge: Uint8Array;
  rpId: string;
  origins: readonly string[];
}

/** Why an assertion was refused; one stable code per check. */
export type AssertionRefusalCode =
  | "bad-encoding"
  | "bad-receipt"
  | "bad-client-data"
  | "wrong-type"
  | "challenge-mismatch"
  | "wrong-origin"
  | "cross-origin"
  | "bad-authenticator-data"
  | "wrong-rp"
  | "user-not-present"
  | "user-not-verified"
  | "bad-key"
  | "wrong-key"
  | "wrong-credential"
  | "not-webauthn"
  | "bad-signature";

/** The verdict on an assertion: ok, or the first check that failed and why. */
export type AssertionVerdict = { ok: true } | { ok: false; code: AssertionRefusalCode; reason: string };

/** Authenticator data flags (WebAuthn §6.1): user present and user verified. */
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;

/** rpIdHash (32) + flags (1) + signCount (4): the shortest authenticator data. */
const MIN_AUTH_DATA_BYTES = 37;

/**
 * Verify a WebAuthn assertion offline, per WebAuthn Level 2 §7.2, with
 * node:crypto only: the client data is a `webauthn.get` for exactly the
 * expected challenge from an allowed origin and not cross-origin; the
 * authenticator data is for the expected RP ID with user presence and user
 * verification; and the signature over `authenticatorData || sha256(clientDataJSON)`
 * verifies under the key (P-256 → ES256, Ed25519 → EdDSA, RSA → RS256).
 * Pure and synchronous; never throws on bad input.
 */
export function verifyWebAuthnAssertion(input: WebAuthnAssertion, expect: AssertionExpectation): AssertionVerdict {
  const parsedKey = parseWebAuthnKeyLine(input.publicKey);
  if (!parsedKey) return refuse("bad-key", "the public key is not a webauthn: line of an EC P-256, Ed25519 or RSA (≥ 2048 bits) key");

  const clientData = parseClientData(input.clientDataJSON);
  if (!clientData) return refuse("bad-client-data", "clientDataJSON is not a UTF-8 JSON object");
  if (clientData.type !== "webauthn.get")
    return refuse("wrong-type", `clientDataJSON.type is ${quote(clientData.type)}, expected "webauthn.get"`);
  const challenge = Buffer.from(expect.challenge).toString("base64url");
  if (clientData.challenge !== challenge)
    return refuse(
      "challenge-mismatch",
      `the assertion was made for challenge ${quote(clientData.challenge)}, not ${challenge}: the receipt was altered after signing, or the assertion is for something else`,
    );
  if (typeof clientData.origin !== "string" || !expect.origins.includes(clientData.origin))
    return refuse(
      "wrong-origin",
      `the assertion was made on origin ${quote(clientData.origin)}, not one of ${expect.origins.join(", ") || "(none allowed)"}`,
    );
  if (clientData.crossOrigin === true) return refuse("cross-origin", "the assertion was made in a cross-origin frame");

  const authData = Buffer.from(input.authenticatorData);
  if (authData.length < MIN_AUTH_DATA_BYTES)
    return refuse("bad-authenticator-data", `authenticator data is ${authData.length} bytes, shorter than ${MIN_AUTH_DATA_BYTES}`);
  const rpIdHash = createHash("sha256").update(expect.rpId, "utf8").digest();
  if (!authData.subarray(0, 32).equals(rpIdHash))
    return refuse("wrong-rp", `the assertion was made for another relying party than ${expect.rpId}`);
  const flags = authData[32] ?? 0;
  if ((flags & FLAG_UP) === 0) return refuse("user-not-present", "the authenticator did not confirm user presence");
  if ((flags & FLAG_UV) === 0)
    return refuse("user-not-verified", "the authenticator did not verify the user (PIN or biometric), which twinlock requires");

  // An ECDSA signature has two valid forms (s and n − s) and authenticators need not pick one, so
  // nothing may key on a signature's bytes: receiptHash and the consumed consents leave the signature out.
  const clientDataHash = createHash("sha256").update(input.clientDataJSON).digest();
  const signed = Buffer.concat([authData, clientDataHash]);
  if (!verifySignature(parsedKey.algorithm, parsedKey.key, signed, input.signature))
    return refuse("bad-signature", `the ${parsedKey.algorithm} signature does not verify under the enrolled key`);
  return { ok: true };
}

/** What a receipt's passkey signature is checked against: the enrolled credential and where it may be used. */
export interface WebAuthnEnrolment {
  credential_id: string;
  public_key: string;
  rp_id: string;
  origins: readonly string[];
}

/**
 * Verify a passkey-signed receipt offline against an enrolled credential: the
 * signature names that credential and key, and its assertion verifies with
 * the receipt's own challenge (`receiptChallenge`), so any change to a signed
 * field of the receipt fails. Does not judge the signer's name or rights.
 */
export function verifyWebAuthnReceipt(receipt: object, enrolment: WebAuthnEnrolment): AssertionVerdict {
  const s = (receipt as { signature?: unknown }).signature as Partial<Record<keyof WebAuthnSignature, unknown>> | undefined;
  if (!s || typeof s !== "object" || s.kind !== "webauthn") return refuse("not-webauthn", "the receipt carries no passkey signature");
  if (s.credential_id !== enrolment.credential_id)
    return refuse("wrong-credential", "the receipt is signed by another passkey credential than the enrolled one");
  if (s.public_key !== enrolment.public_key)
    return refuse("wrong-key", "the receipt names another public key than the enrolled credential's");
  const authenticatorData = decodeStrict(s.authenticator_data, "base64url");
  const clientDataJSON = decodeStrict(s.client_data_json, "base64url");
  const signature = decodeStrict(s.value, "base64");
  if (!authenticatorData || !clientDataJSON || !signature)
    return refuse(
      "bad-encoding",
      "the passkey signature's authenticator_data and client_data_json must be base64url and its value base64, each non-empty",
    );
  let challenge: Buffer;
  try {
    challenge = receiptChallenge(receipt);
  } catch {
    return refuse("bad-receipt", "the receipt has no canonical JSON form (text that is not valid Unicode)");
  }
  return verifyWebAuthnAssertion(
    { publicKey: enrolment.public_key, authenticatorData, clientDataJSON, signature },
    { challenge, rpId: enrolment.rp_id, origins: enrolment.origins },
  );
}

function refuse(code: AssertionRefusalCode, reason: string): AssertionVerdict {
  return { ok: false, code, reason };
}

/** A value from client data, quoted for a message and cut short: it is the sender's text. */
function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

function parseClientData(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function verifySignature(algorithm: WebAuthnAlgorithm, key: KeyObject, data: Buffer, signature: Uint8Array): boolean {
  try {
    if (algorithm === "EdDSA") return verify(null, data, key, signature);
    if (algorithm === "ES256") return verify("sha256", data, { key, dsaEncoding: "der" }, signature);
    return verify("sha256", data, { key, padding: constants.RSA_PKCS1_PADDING }, signature);
  } catch {
    return false;
  }
}

/** The bytes of canonical (unpadded base64url, or padded base64) text, or undefined for anything else or empty. */
function decodeStrict(text: unknown, encoding: "base64" | "base64url"): Buffer | undefined {
  if (typeof text !== "string" || text.length === 0) return undefined;
  const bytes = Buffer.from(text, encoding);
  return bytes.length > 0 && bytes.toString(encoding) === text ? bytes : undefined;
}
