import { randomBytes } from "node:crypto";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { RefusalError } from "../errors/errors.js";
import type { GateHome } from "../home/gate-home.js";
import { type EnrolledCredential, findCredential, listReviewers } from "../passkey/reviewer-registry.js";
import { verifyWebAuthnAssertion } from "../passkey/verify-webauthn-assertion.js";
import { receiptChallenge } from "../passkey/webauthn-challenge.js";
import { webauthnSignatureOf } from "../passkey/webauthn-signature.js";
import type { ReceiptSigner } from "../trust/sign-receipt.js";
import { HttpProblem } from "./http-problem.js";
import type { PendingStore } from "./pending-signatures.js";
import type { ReviewerSession } from "./reviewer-sessions.js";

/**
 * Throw unless a passkey's answer to a random challenge (sign-in, or a
 * decision without a receipt) verifies against the enrolled credential:
 * the challenge, its relying party and origins, user verification.
 */
export function requireAssertion(credential: EnrolledCredential, assertion: AuthenticationResponseJSON, challenge: Buffer): void {
  const verdict = verifyWebAuthnAssertion(
    {
      publicKey: credential.public_key,
      authenticatorData: Buffer.from(assertion.response.authenticatorData, "base64url"),
      clientDataJSON: Buffer.from(assertion.response.clientDataJSON, "base64url"),
      signature: Buffer.from(assertion.response.signature, "base64url"),
    },
    { challenge, rpId: credential.rp_id, origins: credential.origins },
  );
  if (!verdict.ok) throw new HttpProblem(403, "BAD_ASSERTION", `the passkey's answer does not verify (${verdict.reason})`);
}

/** Thrown by the capturing signer: the gate built this receipt and stopped before recording it. */
class ReceiptBuilt extends Error {
  constructor(readonly receipt: object) {
    super("receipt built; waiting for the passkey");
  }
}

/**
 * A decision the reviewer signs with a passkey. `receipt` decisions run the
 * gate function with a signer; `confirm` ones (raising a stop, which has no
 * receipt) need a fresh passkey assertion over a random challenge.
 */
export type PasskeyDecision =
  | { kind: "receipt"; run: (key: ReceiptSigner, now: () => Date) => Promise<unknown> }
  | { kind: "confirm"; run: (now: () => Date) => Promise<unknown> };

/** The relying party passkeys are enrolled for and asserted to. */
export interface RelyingPartyInfo {
  id: string;
  name: string;
  origin: string;
}

/** Options for `navigator.credentials.get`, limited to the reviewer's own passkeys, user verification required. */
function requestOptions(challenge: Buffer, rp: RelyingPartyInfo, credentialIds: string[]): Record<string, unknown> {
  return {
    challenge: challenge.toString("base64url"),
    rpId: rp.id,
    timeout: 120_000,
    userVerification: "required",
    allowCredentials: credentialIds.map((id) => ({ id, type: "public-key" })),
  };
}

/** The reviewer's enrolled credential IDs (none when revoked since signing in: then nothing can be signed). */
function credentialsOf(home: GateHome, session: ReviewerSession): string[] {
  const reviewer = listReviewers(home).find((r) => r.name === session.reviewer && !r.revoked);
  return reviewer ? reviewer.credentials.map((c) => c.credential_id) : [];
}

/**
 * First half of a passkey decision: run the decision up to the receipt
 * (every check, under the lock, nothing recorded), keep the receipt's
 * signing hash as the challenge, and return the WebAuthn request. A refusal
 * (a stale hash, a wrong state) comes back here, before the passkey is asked.
 */
export async function beginPasskeyDecision(
  decision: PasskeyDecision,
  context: { home: GateHome; session: ReviewerSession; request: unknown; pending: PendingStore; rp: RelyingPartyInfo; now: Date },
): Promise<{ challenge_id: string; options: Record<string, unknown> }> {
  const ids = credentialsOf(context.home, context.session);
  if (ids.length === 0)
    throw new HttpProblem(403, "NOT_ENROLLED", `${context.session.reviewer} has no enrolled passkey any more; ask for a new invitation`);
  let challenge: Buffer;
  if (decision.kind === "receipt") {
    const capture: ReceiptSigner = {
      kind: "signer",
      person: context.session.reviewer,
      publicKey: "",
      sign: (receipt) => {
        throw new ReceiptBuilt(receipt);
      },
    };
    try {
      await decision.run(capture, () => context.now);
      throw new Error("the decision finished without asking for a signature");
    } catch (error) {
      if (!(error instanceof ReceiptBuilt)) throw error;
      challenge = receiptChallenge(error.receipt);
    }
  } else {
    challenge = randomBytes(32);
  }
  const pending = await context.pending.add(
    { reviewer: context.session.reviewer, request: canonicalJson(context.request), challenge, at: context.now },
    context.now.getTime(),
  );
  return { challenge_id: pending.id, options: requestOptions(challenge, context.rp, ids) };
}

/**
 * Second half: the signed answer completes only the decision it was asked
 * for (same reviewer, same request), within its time. The decision runs
 * again at the time the receipt was built, so the same receipt comes out
 * unless the run changed meanwhile, which is refused; the receipt's trust
 * check then verifies the assertion offline as admission will.
 */
export async function completePasskeyDecision<T>(
  decision: PasskeyDecision,
  context: {
    home: GateHome;
    session: ReviewerSession;
    request: unknown;
    pending: PendingStore;
    rp: RelyingPartyInfo;
    now: Date;
    challengeId: string;
    assertion: AuthenticationResponseJSON;
  },
): Promise<T> {
  const pending = await context.pending.take(context.challengeId, context.now.getTime());
  if (!pending || pending.reviewer !== context.session.reviewer || pending.request !== canonicalJson(context.request))
    throw new HttpProblem(
      409,
      "CHALLENGE_EXPIRED",
      "this signing request expired, was used, or was made for another decision; submit the form again",
    );
  const found = findCredential(context.home, context.assertion.rawId);
  if (!found || found.reviewer.name !== context.session.reviewer)
    throw new HttpProblem(403, "UNKNOWN_PASSKEY", "the passkey used is not one of your enrolled passkeys");
  const { credential } = found;
  if (decision.kind === "confirm") {
    requireAssertion(credential, context.assertion, pending.challenge);
    return (await decision.run(() => pending.at)) as T;
  }
  const signer: ReceiptSigner = {
    kind: "signer",
    person: context.session.reviewer,
    publicKey: credential.public_key,
    sign: (receipt) => {
      if (!receiptChallenge(receipt).equals(pending.challenge))
        throw new RefusalError(
          "the run changed while you were signing (the receipt is no longer the one your passkey signed); reload the page and decide again",
          {
            code: "STALE_DECISION",
          },
        );
      return webauthnSignatureOf(context.assertion, credential.public_key, context.session.reviewer);
    },
  };
  return (await decision.run(signer, () => pending.at)) as T;
}
