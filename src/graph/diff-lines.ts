/**
 * A readable line difference for `graph --check`: the changed region of the
 * two texts (common head and tail trimmed), each line marked `-` (committed)
 * or `+` (rebuilt), at most `limit` lines. Not a diff: it trims the common
 * head and tail and lists what is on one side only, in time and memory linear
 * in the texts with no search, so it needs no budget beyond the graph file's
 * size limit (every true line diff goes through `diffWithinBudget`).
 */
export function diffLines(committed: string, rebuilt: string, limit = 40): string[] {
  const a = committed.split("\n");
  const b = rebuilt.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const removed = a.slice(head, a.length - tail);
  const added = b.slice(head, b.length - tail);
  const removedSet = new Set(added);
  const addedSet = new Set(removed);
  const out = [`@@ from line ${head + 1} @@`];
  // Lines present on both sides only moved; show them only when nothing else differs.
  const onlyRemoved = removed.filter((line) => !removedSet.has(line));
  const onlyAdded = added.filter((line) => !addedSet.has(line));
  const moved = onlyRemoved.length === 0 && onlyAdded.length === 0;
  for (const line of moved ? removed : onlyRemoved) out.push(`- ${line}`);
  for (const line of moved ? added : onlyAdded) out.push(`+ ${line}`);
  if (out.length > limit + 1) return [...out.slice(0, limit + 1), `… ${out.length - limit - 1} more lines differ`];
  return out;
}
