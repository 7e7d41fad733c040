/** Levenshtein distance between two short strings. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const here = row[j] as number;
      row[j] = Math.min(here + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = here;
    }
  }
  return row[b.length] as number;
}

/** The choice a mistyped value most likely meant (at most 2 edits away, case aside), for "did you mean …?". */
export function closestChoice(value: string, choices: readonly string[]): string | undefined {
  let best: { choice: string; d: number } | undefined;
  for (const choice of choices) {
    const d = editDistance(value.toLowerCase().slice(0, 64), choice.toLowerCase());
    if (d <= 2 && (!best || d < best.d)) best = { choice, d };
  }
  return best?.choice;
}
