import { createHash } from "node:crypto";
import { receiptSigningBytes } from "../trust/sign-receipt.js";

/**
 * The WebAuthn challenge of a receipt: sha256 of exactly the bytes an Ed25519
 * key would sign (`receiptSigningBytes`: the domain, then the canonical
 * receipt without its signature), so a passkey assertion binds the same content.
 */
export function receiptChallenge(receipt: object): Buffer {
  return createHash("sha256").update(receiptSigningBytes(receipt)).digest();
}

/** The receipt's challenge as base64url without padding: the form it takes in `clientDataJSON.challenge`. */
export function receiptChallengeBase64url(receipt: object): string {
  return receiptChallenge(receipt).toString("base64url");
}
