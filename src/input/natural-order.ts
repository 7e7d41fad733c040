/** One collator for every natural-order sort (`MD-9` before `MD-10`): making one per comparison costs milliseconds. */
const COLLATOR = new Intl.Collator("en", { numeric: true });

/** Compare two IDs or names in natural order. */
export function naturalCompare(a: string, b: string): number {
  return COLLATOR.compare(a, b);
}
