import "../schemas/zod-setup.js";
import { z } from "zod/mini";
import { UsageError } from "../errors/errors.js";
import type { PinnedPolicy } from "../home/suite-pins.js";
import type { TrustedReviewer } from "../passkey/enrolled-reviewers.js";
import { PoliciesSchema, RIGHTS, type SuiteConfig } from "../suite/suite-config.js";

/** The file `export --out DIR` writes beside run.json: who the store trusted to sign the run's receipts, when it was exported. */
export const EXPORTED_TRUST_FILE = "trust.json";

export const ExportedTrustSchema = z.strictObject({
  format: z.literal("twinlock-export-trust/1"),
  suite_id: z.string().check(z.minLength(1), z.maxLength(200)),
  /** The sha256 of the pinned twinlock.yaml the reviewers come from. */
  config_sha256: z.string().check(z.regex(/^sha256:[0-9a-f]{64}$/)),
  exported_from: z.string().check(z.maxLength(1000)),
  exported_at: z.string().check(z.maxLength(40)),
  policies: PoliciesSchema,
  reviewers: z.array(
    z.strictObject({
      name: z.string().check(z.minLength(1), z.maxLength(200)),
      public_key: z.string().check(z.minLength(1), z.maxLength(2000)),
      rights: z.array(z.enum(RIGHTS)).check(z.minLength(1)),
      webauthn: z.optional(
        z.strictObject({
          credential_id: z.string().check(z.maxLength(2000)),
          rp_id: z.string().check(z.maxLength(300)),
          origins: z.array(z.string().check(z.maxLength(300))),
        }),
      ),
    }),
  ),
  revoked: z.array(z.string().check(z.maxLength(2000))),
  /**
   * The key CI closes runs verified with (`trust export --ci-identity NAME`): a
   * reviewer of the pinned suite whose only right is `verify`, so CI can sign
   * the close after `verify` passes and nothing else (never a review or consent).
   */
  ci_identity: z.optional(
    z.strictObject({ name: z.string().check(z.minLength(1), z.maxLength(200)), public_key: z.string().check(z.maxLength(2000)) }),
  ),
  /** The gates whose signatures the store trusted (the pin's gate_keys), and the exporting gate's own key. */
  gate_keys: z.optional(
    z
      .array(z.strictObject({ name: z.string().check(z.minLength(1), z.maxLength(200)), public_key: z.string().check(z.maxLength(200)) }))
      .check(z.maxLength(101)),
  ),
});
export type ExportedTrust = z.infer<typeof ExportedTrustSchema>;

/**
 * The trust a run's receipts were judged by in its store, for an offline
 * audit of an export: the pinned suite's policies and reviewer keys, with
 * the store's enrolled passkeys (and revocations) merged in, as admission
 * merges them.
 */
export function exportedTrustOf(
  pinned: PinnedPolicy,
  from: string,
  now: Date,
  gateKey?: string,
  homeGates: ReadonlyArray<{ name: string; public_key: string }> = [],
  ciIdentity?: string,
): ExportedTrust {
  const seen = new Set(gateKey ? [gateKey] : []);
  const pinnedGates = [...(pinned.config.gate_keys ?? []), ...homeGates]
    .filter((g) => !seen.has(g.public_key) && seen.add(g.public_key))
    .map((g) => ({ name: g.name, public_key: g.public_key }));
  const reviewers = (pinned.config.reviewers ?? []) as TrustedReviewer[];
  const ci = ciIdentity === undefined ? undefined : ciIdentityOf(reviewers, ciIdentity, pinned.config.revoked ?? []);
  return ExportedTrustSchema.parse({
    format: "twinlock-export-trust/1",
    suite_id: pinned.pin.suite_id,
    config_sha256: pinned.pin.config_sha256,
    exported_from: from,
    exported_at: now.toISOString(),
    policies: pinned.config.policies ?? {},
    reviewers: reviewers.map((r) => ({
      name: r.name,
      public_key: r.public_key,
      rights: r.rights,
      ...(r.webauthn ? { webauthn: r.webauthn } : {}),
    })),
    revoked: pinned.config.revoked ?? [],
    ...(ci ? { ci_identity: ci } : {}),
    gate_keys: [...(gateKey ? [{ name: `exported-from: ${from}`.slice(0, 200), public_key: gateKey }] : []), ...pinnedGates],
  });
}

/**
 * The reviewer named as CI's identity: listed by a key (CI holds a key file, not a passkey), with the `verify`
 * right and no other, and not revoked. Anything else is bad input: CI that could review or
 * consent would approve the plans it then closes.
 */
function ciIdentityOf(
  reviewers: readonly TrustedReviewer[],
  name: string,
  revoked: readonly string[],
): { name: string; public_key: string } {
  const r = reviewers.find((x) => x.name === name);
  if (!r)
    throw new UsageError(
      `the CI identity ${name} is not a reviewer of the pinned suite; add it under \`reviewers:\` with rights: [verify] (keygen with that name and the verify right prints the entry) and re-pin`,
    );
  if (r.webauthn)
    throw new UsageError(`the CI identity ${name} is a passkey; CI signs with a key file: list a key with rights: [verify] for it`);
  if (r.rights.length !== 1 || r.rights[0] !== "verify")
    throw new UsageError(
      `the CI identity ${name} has the rights ${r.rights.join(", ")}; CI's identity may only verify (rights: [verify]), never review, consent or approve what it closes`,
    );
  if (revoked.includes(r.public_key))
    throw new UsageError(`the CI identity ${name}'s key is revoked; make CI a new key with rights: [verify] and re-pin`);
  return { name: r.name, public_key: r.public_key };
}

/** What the trust checks take from a trust file in the export format: its policies, reviewers (passkeys included), revocations and gates. */
export function trustConfigOf(trust: ExportedTrust): SuiteConfig {
  return {
    policies: trust.policies,
    reviewers: trust.reviewers,
    revoked: trust.revoked,
    gate_keys: trust.gate_keys ?? [],
  } as unknown as SuiteConfig;
}
