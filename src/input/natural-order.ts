/** Strings compared by the hand-written path: prompt IDs and names alike (capitals, digits, dashes), not too long. */
const ID_LIKE = /^[A-Z0-9-]{0,64}$/;

/**
 * Compare two IDs or names in natural order (`MD-9` before `MD-10`), as
 * `Intl.Collator("en", { numeric: true })` does. Prompt IDs, which is what
 * is sorted almost always, are compared here without the collator: making
 * one loads the ICU collation data, which costs milliseconds on every call
 * that sorts. A property test holds the two equal on such strings.
 */
export function naturalCompare(a: string, b: string): number {
  if (ID_LIKE.test(a) && ID_LIKE.test(b)) return compareIdLike(a, b);
  collator ??= new Intl.Collator("en", { numeric: true });
  return collator.compare(a, b);
}

let collator: Intl.Collator | undefined;

/**
 * Runs of digits compare by their value (leading zeros do not count, as in
 * the collator), other characters one by one: `-` before digits before
 * letters, which is both the collator's order and the code points'.
 */
function compareIdLike(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let endA = i;
      while (endA < a.length && isDigit(a.charCodeAt(endA))) endA++;
      let endB = j;
      while (endB < b.length && isDigit(b.charCodeAt(endB))) endB++;
      while (i < endA - 1 && a.charCodeAt(i) === 48) i++;
      while (j < endB - 1 && b.charCodeAt(j) === 48) j++;
      if (endA - i !== endB - j) return endA - i < endB - j ? -1 : 1;
      for (; i < endA; i++, j++) if (a.charCodeAt(i) !== b.charCodeAt(j)) return a.charCodeAt(i) < b.charCodeAt(j) ? -1 : 1;
      continue;
    }
    if (ca !== cb) return ca < cb ? -1 : 1;
    i++;
    j++;
  }
  const restA = a.length - i;
  const restB = b.length - j;
  return restA === restB ? 0 : restA < restB ? -1 : 1;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
