import { createHash, randomBytes } from "node:crypto";
import {
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { RefusalError, UsageError } from "../errors/errors.js";
import { type GateHome, homeLabel } from "../home/gate-home.js";
import { coseToPublicKey, PASSKEY_COSE_ALGORITHMS } from "./cose-to-spki.js";
import {
  type EnrolledCredential,
  type Invitation,
  parseReviewerRights,
  REVIEWER_NAME,
  type Reviewer,
  type ReviewerRegistry,
  type ReviewerRight,
  readReviewerRegistry,
  updateReviewerRegistry,
} from "./reviewer-registry.js";
import { webauthnKeyLine } from "./webauthn-key-line.js";

/** How long an enrolment invitation lasts (SPEC §10: 15 minutes, single use). */
export const INVITATION_TTL_MS = 15 * 60 * 1000;

/** Used or expired invitations are forgotten this long after they expire (until then they are refused by name). */
const INVITATION_MEMORY_MS = 24 * 60 * 60 * 1000;

/** The relying party a passkey is registered for: its RP ID (a domain, e.g. `localhost`), display name and the page's origin. */
export interface RelyingParty {
  id: string;
  name: string;
  origin: string;
}

/** Why an invitation token was refused. */
export type InvitationRefusal = "unknown-invitation" | "expired-invitation" | "used-invitation" | "enrolment-not-started";

/**
 * Invite a person to enrol a passkey as reviewer `name` with `rights`: a new
 * one-time token (shown once, kept only as its sha256) that expires in 15
 * minutes. Replaces a pending invitation for the same name; refuses a name
 * already enrolled (revoked ones too: a name means one person in receipts).
 */
export async function createInvitation(
  home: GateHome,
  name: string,
  rights: readonly string[] | string,
  now: Date = new Date(),
): Promise<{ token: string; expiresAt: string; replaced: boolean }> {
  if (!REVIEWER_NAME.test(name))
    throw new UsageError(
      `reviewer name ${JSON.stringify(name)} is not valid; use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. alice)`,
    );
  const granted = parseReviewerRights(rights);
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS).toISOString();
  const replaced = await updateReviewerRegistry(home, (registry) => {
    if (registry.reviewers.some((r) => r.name === name))
      throw new RefusalError(
        `a reviewer named ${name} is already enrolled in ${home.dir}${registry.reviewers.find((r) => r.name === name)?.revoked ? " (revoked)" : ""}; choose another name`,
        { code: "duplicate-reviewer", name },
      );
    const kept = prune(registry, now).invitations;
    const pending = kept.filter((i) => i.name === name && i.used_at === null);
    const invitation: Invitation = {
      token_sha256: tokenHash(token),
      name,
      rights: granted,
      created_at: now.toISOString(),
      expires_at: expiresAt,
      used_at: null,
      challenge: null,
      user_id: null,
    };
    return {
      registry: { ...registry, invitations: [...kept.filter((i) => !pending.includes(i)), invitation] },
      result: pending.some((i) => Date.parse(i.expires_at) > now.getTime()),
    };
  });
  return { token, expiresAt, replaced };
}

/**
 * Begin enrolling with an invitation token: the registration options for the
 * browser (`startRegistration`), with user verification required, a
 * discoverable credential preferred, no attestation, and ES256, EdDSA or
 * RS256 keys. The challenge is recorded with the invitation; starting again
 * replaces it. Refuses an unknown, used or expired token.
 */
export async function startEnrolment(
  home: GateHome,
  token: string,
  rp: RelyingParty,
  now: Date = new Date(),
): Promise<{ options: PublicKeyCredentialCreationOptionsJSON; challenge: string; expiresAt: string }> {
  const invitation = usableInvitation(home, readReviewerRegistry(home), token, now);
  const userId = invitation.user_id ?? randomBytes(16).toString("base64url");
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: invitation.name,
    userDisplayName: invitation.name,
    userID: new Uint8Array(Buffer.from(userId, "base64url")),
    attestationType: "none",
    authenticatorSelection: { residentKey: "preferred", userVerification: "required" },
    supportedAlgorithmIDs: [...PASSKEY_COSE_ALGORITHMS],
    timeout: 5 * 60 * 1000,
  });
  await updateReviewerRegistry(home, (registry) => {
    const current = usableInvitation(home, registry, token, now);
    const started: Invitation = { ...current, challenge: options.challenge, user_id: userId };
    return { registry: { ...registry, invitations: registry.invitations.map((i) => (i === current ? started : i)) }, result: undefined };
  });
  return { options, challenge: options.challenge, expiresAt: invitation.expires_at };
}

/**
 * Finish enrolling: verify the browser's registration response against the
 * challenge `startEnrolment` recorded (user verification required), then,
 * under the registry's lock, consume the invitation and enrol the reviewer
 * with that passkey. Of two finishes racing on one token exactly one enrols;
 * the other is refused as used.
 */
export async function finishEnrolment(
  home: GateHome,
  token: string,
  response: RegistrationResponseJSON,
  expectedChallenge: string,
  rp: RelyingParty,
  now: Date = new Date(),
): Promise<{ reviewer: Reviewer; credential: EnrolledCredential }> {
  requireChallenge(usableInvitation(home, readReviewerRegistry(home), token, now), expectedChallenge);
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: [...PASSKEY_COSE_ALGORITHMS],
    });
  } catch (error) {
    throw new RefusalError(
      `the passkey registration does not verify (${(error as Error).message}); start the enrolment again from the link`,
      { code: "bad-registration" },
      { cause: error },
    );
  }
  if (!verified.verified)
    throw new RefusalError("the passkey registration does not verify; start the enrolment again from the link", {
      code: "bad-registration",
    });
  const info = verified.registrationInfo;
  const publicKey = webauthnKeyLine(coseToPublicKey(info.credential.publicKey));
  const credential: EnrolledCredential = {
    credential_id: info.credential.id,
    public_key: publicKey,
    sign_count: info.credential.counter,
    transports: (info.credential.transports ?? []).slice(0, 10),
    created_at: now.toISOString(),
    rp_id: rp.id,
    origins: [rp.origin],
  };
  return updateReviewerRegistry(home, (registry) => {
    // Decided again under the lock: another finish may have used the token since it was read.
    const invitation = usableInvitation(home, registry, token, now);
    requireChallenge(invitation, expectedChallenge);
    if (registry.reviewers.some((r) => r.name === invitation.name))
      throw new RefusalError(`a reviewer named ${invitation.name} is already enrolled; ask for an invitation under another name`, {
        code: "duplicate-reviewer",
        name: invitation.name,
      });
    if (
      registry.reviewers.some((r) => r.credentials.some((c) => c.credential_id === credential.credential_id || c.public_key === publicKey))
    )
      throw new RefusalError("this passkey is already enrolled for another reviewer; create a new passkey", {
        code: "duplicate-credential",
      });
    const reviewer: Reviewer = {
      name: invitation.name,
      rights: invitation.rights as ReviewerRight[],
      user_id: invitation.user_id ?? "",
      enrolled_at: now.toISOString(),
      revoked: false,
      revoked_at: null,
      credentials: [credential],
    };
    const used: Invitation = { ...invitation, used_at: now.toISOString() };
    return {
      registry: {
        ...registry,
        reviewers: [...registry.reviewers, reviewer],
        invitations: registry.invitations.map((i) => (i === invitation ? used : i)),
      },
      result: { reviewer, credential },
    };
  });
}

/** The sha256 (hex) under which a token is kept: the token itself is never written. */
function tokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The invitation of `token` when it can still be used at `now`; a RefusalError naming why not. */
/** The invitation an enrolment link stands for, refused (by code) when unknown, used or expired. */
export function findUsableInvitation(home: GateHome, token: string, now: Date = new Date()): Invitation {
  return usableInvitation(home, readReviewerRegistry(home), token, now);
}

function usableInvitation(home: GateHome, registry: ReviewerRegistry, token: string, now: Date): Invitation {
  const hash = tokenHash(token);
  const invitation = registry.invitations.find((i) => i.token_sha256 === hash);
  const again = "ask for a new invitation (twinlock reviewer invite NAME)";
  if (!invitation) throw refusal("unknown-invitation", `this enrolment link is not valid in ${homeLabel(home)}; ${again}`);
  if (invitation.used_at !== null)
    throw refusal("used-invitation", `this enrolment link was already used at ${invitation.used_at} (it works once); ${again}`);
  if (Date.parse(invitation.expires_at) <= now.getTime())
    throw refusal("expired-invitation", `this enrolment link expired at ${invitation.expires_at} (links last 15 minutes); ${again}`);
  return invitation;
}

function requireChallenge(invitation: Invitation, expectedChallenge: string): void {
  if (invitation.challenge === null || invitation.challenge !== expectedChallenge)
    throw refusal(
      "enrolment-not-started",
      "this registration answers another enrolment challenge than the one last started for this link; start the enrolment again from the link",
    );
}

function refusal(code: InvitationRefusal, message: string): RefusalError {
  return new RefusalError(message, { code });
}

/** The registry without invitations that expired over a day ago (used or not). */
function prune(registry: ReviewerRegistry, now: Date): ReviewerRegistry {
  return {
    ...registry,
    invitations: registry.invitations.filter((i) => Date.parse(i.expires_at) + INVITATION_MEMORY_MS > now.getTime()),
  };
}
