import { type KeyObject, sign, verify } from "node:crypto";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { parsePublicKeyLine, publicKeyLine } from "./keys.js";

/**
 * Domain separation: a receipt signature can never be mistaken for a
 * signature over anything else twinlock (or another tool) signs.
 */
export const RECEIPT_SIGNING_DOMAIN = "twinlock-receipt/v1\n";

/** A signed receipt's signature field. */
export interface ReceiptSignature {
  public_key: string;
  signer: string;
  value: string;
}

/**
 * The exact bytes signed: the domain, then the RFC 8785 canonical form of the
 * whole receipt without its signature. The receipt names its run, planner,
 * executor, handoff hash and revision, so a signature cannot be replayed into
 * another run, revision or pair.
 */
export function receiptSigningBytes(receipt: object): Buffer {
  const { signature: _s, consumed_at: _c, ...body } = receipt as Record<string, unknown>;
  return Buffer.from(RECEIPT_SIGNING_DOMAIN + canonicalJson(body), "utf8");
}

/** Sign a receipt with an Ed25519 private key, as `signer`. */
export function signReceipt<R extends object>(receipt: R, key: KeyObject, signer: string): R & { signature: ReceiptSignature } {
  const value = sign(null, receiptSigningBytes(receipt), key).toString("base64");
  return { ...receipt, signature: { public_key: publicKeyLine(key), signer, value } };
}

/** True when the receipt's signature is a valid Ed25519 signature by its stated public key over its current content. */
export function verifyReceiptSignature(receipt: { signature?: ReceiptSignature }): boolean {
  const s = receipt.signature;
  if (!s) return false;
  const key = parsePublicKeyLine(s.public_key);
  if (!key) return false;
  try {
    return verify(null, receiptSigningBytes(receipt), key, Buffer.from(s.value, "base64"));
  } catch {
    return false;
  }
}
