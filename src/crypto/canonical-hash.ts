import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

/** `sha256:` followed by 64 lower-case hex digits. */
export const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** Canonical JSON per RFC 8785 (JCS): the one byte form twinlock hashes and signs. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no canonical JSON form");
  return text;
}

/** `sha256:<hex>` of the RFC 8785 canonical form of `value`. */
export function hashCanonical(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}
