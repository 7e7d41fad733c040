import { type KeyObject, sign, verify } from "node:crypto";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { parsePublicKeyLine, publicKeyLine } from "./keys.js";

/**
 * Domain separation: a receipt signature can never be mistaken for a
 * signature over anything else twinlock (or another tool) signs.
 */
export const RECEIPT_SIGNING_DOMAIN = "twinlock-receipt/v1\n";

/** A signed receipt's signature field: Ed25519 (no `kind`), or a passkey's WebAuthn assertion. */
export interface ReceiptSignature {
  kind?: "webauthn";
  public_key: string;
  signer: string;
  value: string;
  credential_id?: string;
  authenticator_data?: string;
  client_data_json?: string;
}

/**
 * Who signs a decision when it is not a key file on this machine: a
 * reviewer's passkey in the browser. `sign` gets the finished unsigned
 * receipt and returns its signature, or throws (nothing is recorded).
 */
export interface ReceiptSigner {
  kind: "signer";
  /** The enrolled reviewer's name. */
  person: string;
  /** The signer's public key line, as the trust config lists it. */
  publicKey: string;
  sign(receipt: object): ReceiptSignature;
}

/** A key file's private key, or a signer that signs elsewhere (a passkey). */
export type ReceiptKey = KeyObject | ReceiptSigner;

/** True for a signer, false for a key file's private key. */
export function isReceiptSigner(key: ReceiptKey): key is ReceiptSigner {
  return (key as ReceiptSigner).kind === "signer";
}

/**
 * The exact bytes signed: the domain, then the RFC 8785 canonical form of the
 * whole receipt without its signature. The receipt names its run, planner,
 * executor, handoff hash and revision, so a signature cannot be replayed into
 * another run, revision or pair.
 */
export function receiptSigningBytes(receipt: object): Buffer {
  return Buffer.from(receiptSigningText(receipt), "utf8");
}

function receiptSigningText(receipt: object): string {
  const { signature: _s, consumed_at: _c, ...body } = receipt as Record<string, unknown>;
  return RECEIPT_SIGNING_DOMAIN + canonicalJson(body);
}

/** Sign a receipt with an Ed25519 private key, as `signer`. */
export function signReceipt<R extends object>(receipt: R, key: KeyObject, signer: string): R & { signature: ReceiptSignature } {
  const value = sign(null, receiptSigningBytes(receipt), key).toString("base64");
  return { ...receipt, signature: { public_key: publicKeyLine(key), signer, value } };
}

/** True when the receipt's signature is a valid Ed25519 signature by its stated public key over its current content. */
export function verifyReceiptSignature(receipt: { signature?: ReceiptSignature }): boolean {
  const s = receipt.signature;
  if (!s || s.kind !== undefined) return false;
  // One decision judges a receipt several times (before the lock, under it, in the run's own check): the answer for
  // these exact bytes, key and signature is worked out once.
  const text = receiptSigningText(receipt);
  const asked = `${s.public_key}\n${s.value}\n${text}`;
  const known = VERIFIED.get(asked);
  if (known !== undefined) return known;
  const key = parsePublicKeyLine(s.public_key);
  let ok = false;
  if (key)
    try {
      ok = verify(null, Buffer.from(text, "utf8"), key, Buffer.from(s.value, "base64"));
    } catch {
      ok = false;
    }
  if (VERIFIED.size >= 10_000) VERIFIED.clear();
  VERIFIED.set(asked, ok);
  return ok;
}

/** Answers of `verifyReceiptSignature`, by public key, signature and signed text (everything the answer depends on). */
const VERIFIED = new Map<string, boolean>();
