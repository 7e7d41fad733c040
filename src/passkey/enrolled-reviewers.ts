import type { GateHome } from "../home/gate-home.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { readReviewerRegistry } from "./reviewer-registry.js";

/** Where an enrolled passkey may sign: checked offline for every passkey receipt. */
export interface PasskeyScope {
  credential_id: string;
  rp_id: string;
  origins: string[];
}

/** A reviewer the trust checks know: the suite's Ed25519 keys, and the gate home's enrolled passkeys (with their scope). */
export type TrustedReviewer = NonNullable<SuiteConfig["reviewers"]>[number] & { webauthn?: PasskeyScope };

/**
 * The suite's trust config with the gate home's enrolled passkeys added
 * (SPEC §10): each credential of a reviewer who is not revoked becomes a
 * listed key with that reviewer's rights; a revoked reviewer's keys are
 * revoked. The home is the trust root the agent cannot write, as the pin
 * is, so its enrolments count like keys listed in the pinned suite.
 */
export function withEnrolledReviewers(config: SuiteConfig, home: GateHome): SuiteConfig {
  const registry = readReviewerRegistry(home);
  if (registry.reviewers.length === 0) return config;
  const listed: TrustedReviewer[] = [];
  const revoked: string[] = [];
  for (const r of registry.reviewers) {
    for (const c of r.credentials) {
      if (r.revoked) revoked.push(c.public_key);
      else
        listed.push({
          name: r.name,
          public_key: c.public_key,
          rights: [...r.rights],
          webauthn: { credential_id: c.credential_id, rp_id: c.rp_id, origins: [...c.origins] },
        });
    }
  }
  return { ...config, reviewers: [...(config.reviewers ?? []), ...listed], revoked: [...(config.revoked ?? []), ...revoked] };
}
