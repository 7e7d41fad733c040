/** Types of the parts of store-bench.mjs the tests use (plain JavaScript: the bench runs without a compiler). */
export interface OrderedDecision {
  /** When it was asked, ms on the monotonic clock. */
  asked: number;
  /** The revision its event got: its place in the run's chain. */
  revision: number;
  /** Which run it was on. */
  run: number;
  latency?: number;
}
export function countInversions(
  decisions: OrderedDecision[],
  marginMs?: number,
): { inversions: number; overtaken: number; longestOvertakenMs: number };
