import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { UsageError } from "../errors/errors.js";

/** `sha256:` followed by 64 lower-case hex digits. */
export const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** Canonical JSON per RFC 8785 (JCS): the one byte form twinlock hashes and signs. */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (error) {
    // RFC 8785 refuses lone surrogates (invalid Unicode); that is bad input, not a crash.
    throw new UsageError(`the data holds text that is not valid Unicode (${(error as Error).message}); remove the lone surrogate`, {
      cause: error,
    });
  }
  if (text === undefined) throw new TypeError("value has no canonical JSON form");
  return text;
}

/** `sha256:<hex>` of the RFC 8785 canonical form of `value`. */
export function hashCanonical(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}
