import type { TrustedReviewer } from "../passkey/enrolled-reviewers.js";
import { verifyWebAuthnReceipt } from "../passkey/verify-webauthn-assertion.js";
import { receiptKindOf } from "../run/receipt-kinds.js";
import type { Right, SuiteConfig } from "../suite/suite-config.js";
import { type ReceiptSignature, verifyReceiptSignature } from "./sign-receipt.js";

export type { Right };

/** Whether a receipt is trusted under the suite's reviewers and policy, and why not. */
export type TrustVerdict =
  | { ok: true; signer: string | null; key: string | null }
  | { ok: false; code: "unsigned" | "bad-signature" | "revoked" | "unknown-key" | "name-mismatch" | "no-right"; reason: string };

/** The name a receipt gives its person: its kind's signer field (RECEIPT_KINDS); for a kind no row names, the first such field it has. */
export function receiptPerson(receipt: { kind: string } & Record<string, unknown>): string {
  const row = receiptKindOf(receipt.kind);
  if (row) return String(receipt[row.signer] ?? "unknown");
  return String(receipt.reviewer ?? receipt.user ?? receipt.approver ?? receipt.by ?? "unknown");
}

/**
 * Judge one receipt against the suite config as it is now: when signed
 * receipts are required (or the receipt is signed at all), the signature must
 * verify, the key must belong to a listed reviewer whose name is the one on
 * the receipt, not be revoked, and carry the right this receipt needs.
 */
export function judgeReceiptTrust(
  receipt: { kind: string; signature?: ReceiptSignature } & Record<string, unknown>,
  right: Right,
  config: SuiteConfig,
): TrustVerdict {
  const required = config.policies?.require_signed_receipts === true;
  const s = receipt.signature;
  if (!s)
    return required
      ? {
          ok: false,
          code: "unsigned",
          reason: `the ${receipt.kind} receipt by ${receiptPerson(receipt)} is unsigned, and this suite requires signed receipts (sign with --key FILE, a listed key with the ${right} right)`,
        }
      : { ok: true, signer: null, key: null };
  const listed = (config.reviewers ?? []).find((r) => r.public_key === s.public_key) as TrustedReviewer | undefined;
  if (s.kind === "webauthn" && (config.revoked ?? []).includes(s.public_key))
    return { ok: false, code: "revoked", reason: `the ${receipt.kind} receipt is signed by a revoked passkey (${short(s.public_key)})` };
  const passkey = s.kind === "webauthn" ? judgePasskeySignature(receipt, listed) : undefined;
  if (passkey) return passkey;
  if (s.kind !== "webauthn" && !verifyReceiptSignature(receipt))
    return {
      ok: false,
      code: "bad-signature",
      reason: `the ${receipt.kind} receipt's signature does not verify: it was altered after signing, or signed for another run, revision or pair`,
    };
  if ((config.revoked ?? []).includes(s.public_key))
    return { ok: false, code: "revoked", reason: `the ${receipt.kind} receipt is signed by a revoked key (${short(s.public_key)})` };
  const reviewer = listed;
  if (!reviewer)
    return required
      ? {
          ok: false,
          code: "unknown-key",
          reason: `the ${receipt.kind} receipt is signed by an unknown key (${short(s.public_key)}), not one of the suite's reviewers`,
        }
      : { ok: true, signer: s.signer, key: s.public_key };
  if (reviewer.name !== s.signer || reviewer.name !== receiptPerson(receipt)) {
    return {
      ok: false,
      code: "name-mismatch",
      reason: `the ${receipt.kind} receipt names ${receiptPerson(receipt)} but is signed by ${reviewer.name}'s key`,
    };
  }
  if (!reviewer.rights.includes(right))
    return { ok: false, code: "no-right", reason: `${reviewer.name}'s key has the rights ${reviewer.rights.join(", ")}, not ${right}` };
  return { ok: true, signer: reviewer.name, key: s.public_key };
}

/**
 * A passkey's assertion is checked offline against the enrolment it names
 * (credential, relying party, origins): one the home does not hold cannot
 * be judged, so it is refused as an unknown key whatever the policy.
 */
function judgePasskeySignature(
  receipt: { kind: string; signature?: ReceiptSignature } & Record<string, unknown>,
  listed: TrustedReviewer | undefined,
): TrustVerdict | undefined {
  const s = receipt.signature as ReceiptSignature;
  if (!listed?.webauthn)
    return {
      ok: false,
      code: "unknown-key",
      reason: `the ${receipt.kind} receipt is signed by a passkey (${short(s.public_key)}) that is not enrolled in this gate home`,
    };
  if (s.credential_id !== listed.webauthn.credential_id)
    return { ok: false, code: "bad-signature", reason: `the ${receipt.kind} receipt names another credential than the enrolled passkey's` };
  const verdict = verifyWebAuthnReceipt(receipt, { public_key: listed.public_key, ...listed.webauthn });
  if (!verdict.ok)
    return {
      ok: false,
      code: "bad-signature",
      reason: `the ${receipt.kind} receipt's passkey assertion does not verify (${verdict.reason}): it was altered after signing, or signed for another run, revision or pair`,
    };
  return undefined;
}

function short(key: string): string {
  return `${key.slice(0, 20)}…`;
}
