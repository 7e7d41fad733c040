/**
 * Edit distance between two short strings, a swap of two neighbouring
 * letters counting as one edit (as typing slips do): `requried` is one edit
 * from `required`.
 */
export function editDistance(a: string, b: string): number {
  let before = Array.from({ length: b.length + 1 }, () => 0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] as number) + 1);
      row.push(d);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length] as number;
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
