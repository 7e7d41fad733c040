import { RefusalError } from "../errors/errors.js";
import { resolveActor } from "../input/resolve-actor.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { publicKeyLine } from "./keys.js";
import { isReceiptSigner, type ReceiptKey } from "./sign-receipt.js";

/**
 * The name a decision is recorded under. With a key the suite knows, it is
 * the name the config gives that key, and a different explicit name is
 * refused, so nobody signs as someone else. Otherwise it is the name given,
 * else TWINLOCK_ACTOR, else the login name.
 */
export function personForKey(key: ReceiptKey | undefined, given: string | undefined, config: SuiteConfig, option: string): string {
  if (key) {
    const line = isReceiptSigner(key) ? key.publicKey : publicKeyLine(key);
    const reviewer = (config.reviewers ?? []).find((r) => r.public_key === line);
    if (reviewer) {
      if (given !== undefined && given !== reviewer.name) {
        throw new RefusalError(
          `${option} ${given} does not match the key, which belongs to ${reviewer.name}; omit ${option} or use your own key`,
        );
      }
      return reviewer.name;
    }
    // A passkey's signer speaks for the reviewer it was enrolled for; a name other than that one is refused.
    if (isReceiptSigner(key)) {
      if (given !== undefined && given !== key.person)
        throw new RefusalError(`${option} ${given} does not match the passkey, which belongs to ${key.person}`);
      return key.person;
    }
  }
  return resolveActor(given);
}
