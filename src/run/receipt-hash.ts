import { hashCanonical } from "../crypto/canonical-hash.js";

/**
 * The hash that identifies a receipt: its canonical body without the
 * signature and without bookkeeping added later (`consumed_at`), so the same
 * decision always has the same hash wherever it is recorded.
 */
export function receiptHash(receipt: object): string {
  const { signature: _s, consumed_at: _c, ...body } = receipt as Record<string, unknown>;
  return hashCanonical(body);
}
