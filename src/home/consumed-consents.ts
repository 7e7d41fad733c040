import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import path from "node:path";
import { IntegrityError } from "../errors/errors.js";
import { fsyncDir } from "../store/atomic-write.js";
import { type GateHome, homeSubdir } from "./gate-home.js";

/**
 * Consents are consumed in the home (SPEC §9), so no copy, fork or restored
 * version of a run file can use a consent again: the home remembers.
 */
export interface ConsumedConsent {
  run_id: string;
  planner: string;
  executor: string;
  consent_hash: string;
  at: string;
}

/** Where the home records that a consent was used. */
function consumedFile(home: GateHome, consentHash: string): string {
  const hex = /^sha256:([0-9a-f]{64})$/.exec(consentHash)?.[1];
  if (!hex) throw new IntegrityError(`${consentHash} is not a consent hash`);
  return path.join(home.dir, "consumed", `${hex}.json`);
}

/** The admission that used this consent, if one did. */
export function findConsumedConsent(home: GateHome, consentHash: string): ConsumedConsent | undefined {
  try {
    return JSON.parse(readFileSync(consumedFile(home, consentHash), "utf8")) as ConsumedConsent;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    // Unreadable or damaged: treat as used (fail closed).
    return { run_id: "unknown", planner: "unknown", executor: "unknown", consent_hash: consentHash, at: "unknown" };
  }
}

/** Record that a consent was used; idempotent for the same admission. */
export function markConsentConsumed(home: GateHome, record: ConsumedConsent): void {
  homeSubdir(home, "consumed");
  const file = consumedFile(home, record.consent_hash);
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    throw error;
  }
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(path.dirname(file));
}
