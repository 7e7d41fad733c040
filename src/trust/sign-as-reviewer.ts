import type { KeyObject } from "node:crypto";
import { RefusalError } from "../errors/errors.js";
import { resolveActor } from "../gate/resolve-actor.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { publicKeyLine } from "./keys.js";

/**
 * The name a decision is recorded under. With a key the suite knows, it is
 * the name the config gives that key, and a different explicit name is
 * refused, so nobody signs as someone else. Otherwise it is the name given,
 * else TWINLOCK_ACTOR, else the login name.
 */
export function personForKey(key: KeyObject | undefined, given: string | undefined, config: SuiteConfig, option: string): string {
  if (key) {
    const line = publicKeyLine(key);
    const reviewer = (config.reviewers ?? []).find((r) => r.public_key === line);
    if (reviewer) {
      if (given !== undefined && given !== reviewer.name) {
        throw new RefusalError(
          `${option} ${given} does not match the key, which belongs to ${reviewer.name}; omit ${option} or use your own key`,
        );
      }
      return reviewer.name;
    }
  }
  return resolveActor(given);
}
