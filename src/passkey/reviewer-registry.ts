import "../schemas/zod-setup.js";
import path from "node:path";
import { z } from "zod/mini";
import { RefusalError, UsageError } from "../errors/errors.js";
import type { GateHome } from "../home/gate-home.js";
import { readHomeText, updateHomeFile } from "../home/shared-home.js";
import { lazySchemasOf } from "../schemas/lazy-schema.js";
import { WEBAUTHN_KEY_PREFIX } from "./webauthn-key-line.js";

/** The rights a person enrolled with a passkey can hold (freeze is for planner agents' Ed25519 keys). */
export const REVIEWER_RIGHTS = ["review", "consent", "apply", "stop", "verify"] as const;
export type ReviewerRight = (typeof REVIEWER_RIGHTS)[number];

/** A reviewer's name: what receipts call the person; safe in a URL, a file name and a log line. */
export const REVIEWER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const registrySchemasOf = lazySchemasOf("reviewer-registry", () => {
  const iso = z.string().check(z.maxLength(40));
  /** base64url of at most `max` characters. */
  const b64url = (max: number) => z.string().check(z.regex(/^[A-Za-z0-9_-]+$/), z.maxLength(max));
  const rights = z.array(z.enum(REVIEWER_RIGHTS)).check(z.minLength(1));
  const reviewerName = z.string().check(z.regex(REVIEWER_NAME));

  /** One enrolled passkey: its ID, its `webauthn:` key line and where it may be used. */
  const EnrolledCredentialSchema = z.strictObject({
    credential_id: b64url(1400),
    public_key: z.string().check(z.startsWith(WEBAUTHN_KEY_PREFIX), z.maxLength(1600)),
    sign_count: z.number().check(z.int(), z.gte(0)),
    transports: z.array(z.string().check(z.maxLength(40))).check(z.maxLength(10)),
    created_at: iso,
    rp_id: z.string().check(z.minLength(1), z.maxLength(253)),
    origins: z.array(z.string().check(z.minLength(1), z.maxLength(300))).check(z.minLength(1), z.maxLength(10)),
  });

  /** One person enrolled in the gate home, with their rights and passkeys. */
  const ReviewerSchema = z.strictObject({
    name: reviewerName,
    rights,
    /** The WebAuthn user handle: random, so it says nothing about the person. */
    user_id: b64url(100),
    enrolled_at: iso,
    revoked: z.boolean(),
    revoked_at: z.nullable(iso),
    credentials: z.array(EnrolledCredentialSchema).check(z.minLength(1)),
  });

  /** An invitation to enrol: only the sha256 of its one-time token is kept. */
  const InvitationSchema = z.strictObject({
    token_sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
    name: reviewerName,
    rights,
    created_at: iso,
    expires_at: iso,
    used_at: z.nullable(iso),
    /** The registration challenge of the enrolment in progress (null before `startEnrolment`). */
    challenge: z.nullable(b64url(200)),
    user_id: z.nullable(b64url(100)),
  });

  const RegistryFileSchema = z.strictObject({
    format: z.literal("twinlock-reviewers/1"),
    reviewers: z.array(ReviewerSchema),
    invitations: z.array(InvitationSchema),
  });
  return { EnrolledCredentialSchema, ReviewerSchema, InvitationSchema, RegistryFileSchema };
});

/* The schemas above, each built on first use (see lazy-schema.ts). */
export const EnrolledCredentialSchema = registrySchemasOf("EnrolledCredentialSchema");
export const ReviewerSchema = registrySchemasOf("ReviewerSchema");
export const InvitationSchema = registrySchemasOf("InvitationSchema");
const RegistryFileSchema = registrySchemasOf("RegistryFileSchema");
export type EnrolledCredential = z.infer<typeof EnrolledCredentialSchema>;
export type Reviewer = z.infer<typeof ReviewerSchema>;
export type Invitation = z.infer<typeof InvitationSchema>;
/** The whole registry file of a gate home. */
export type ReviewerRegistry = z.infer<typeof RegistryFileSchema>;

/** Where the home keeps its reviewers and invitations (one file, so one lock decides every enrolment). */
export function reviewerRegistryFile(home: GateHome): string {
  return path.join(home.dir, "reviewers.json");
}

/** The home's registry as it is on disc; an empty one when there is none; a UsageError when it is damaged (fail closed). */
export function readReviewerRegistry(home: GateHome): ReviewerRegistry {
  const file = reviewerRegistryFile(home);
  return parseRegistry(readHomeText(file), file);
}

function parseRegistry(text: string | undefined, file: string): ReviewerRegistry {
  if (text === undefined) return { format: "twinlock-reviewers/1", reviewers: [], invitations: [] };
  let parsed: ReturnType<typeof RegistryFileSchema.safeParse> | undefined;
  try {
    parsed = RegistryFileSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success) throw new UsageError(`${file} is damaged; restore it from backup (no reviewer can sign in until then)`);
  return parsed.data;
}

/**
 * Change the registry under the home's lock for it (the database's, for a
 * shared home): `change` gets the registry as it is now (read after the lock
 * is taken) and returns the new one, written atomically and durably; what
 * `change` throws leaves it untouched.
 */
export async function updateReviewerRegistry<T>(
  home: GateHome,
  change: (registry: ReviewerRegistry) => { registry: ReviewerRegistry; result: T },
): Promise<T> {
  const file = reviewerRegistryFile(home);
  return updateHomeFile(home, "reviewers.json", (text) => {
    const { registry, result } = change(parseRegistry(text, file));
    return { text: `${JSON.stringify(RegistryFileSchema.parse(registry), null, 1)}\n`, result };
  });
}

/** Every enrolled reviewer, revoked ones included (with `revoked: true`). */
export function listReviewers(home: GateHome): Reviewer[] {
  return readReviewerRegistry(home).reviewers;
}

/** Revoke a reviewer: none of their passkeys signs in or is found any more. Idempotent; refuses an unknown name. */
export async function revokeReviewer(home: GateHome, name: string, now: Date = new Date()): Promise<Reviewer> {
  return updateReviewerRegistry(home, (registry) => {
    const found = registry.reviewers.find((r) => r.name === name);
    if (!found)
      throw new RefusalError(
        `no reviewer named ${JSON.stringify(name)} is enrolled in ${home.dir}; enrolled: ${registry.reviewers.map((r) => r.name).join(", ") || "none"}`,
        { code: "unknown-reviewer", name },
      );
    const revoked: Reviewer = found.revoked ? found : { ...found, revoked: true, revoked_at: now.toISOString() };
    return { registry: { ...registry, reviewers: registry.reviewers.map((r) => (r.name === name ? revoked : r)) }, result: revoked };
  });
}

/**
 * The reviewer and passkey of a credential ID (base64url), for sign-in and
 * for verifying a receipt; undefined when no reviewer has it, or when its
 * reviewer is revoked (unless `includeRevoked`, for showing history).
 */
export function findCredential(
  home: GateHome,
  credentialId: string,
  options: { includeRevoked?: boolean } = {},
): { reviewer: Reviewer; credential: EnrolledCredential } | undefined {
  for (const reviewer of readReviewerRegistry(home).reviewers) {
    if (reviewer.revoked && !options.includeRevoked) continue;
    const credential = reviewer.credentials.find((c) => c.credential_id === credentialId);
    if (credential) return { reviewer, credential };
  }
  return undefined;
}

/** The rights of `--rights review,consent,…`, each one of REVIEWER_RIGHTS, at least one, no repeats; a UsageError otherwise. */
export function parseReviewerRights(text: string | readonly string[]): ReviewerRight[] {
  const items = (typeof text === "string" ? text.split(",") : [...text]).map((s) => s.trim()).filter((s) => s !== "");
  const bad = items.filter((r) => !(REVIEWER_RIGHTS as readonly string[]).includes(r));
  if (bad.length > 0)
    throw new UsageError(
      `unknown reviewer right ${bad.map((b) => JSON.stringify(b)).join(", ")}; rights are ${REVIEWER_RIGHTS.join(", ")}${bad.includes("freeze") ? " (freeze belongs to planner agents' keys, not to people)" : ""}, e.g. --rights review,consent`,
    );
  if (items.length === 0) throw new UsageError(`give at least one right: --rights ${REVIEWER_RIGHTS.join(",")}`);
  return [...new Set(items)] as ReviewerRight[];
}
