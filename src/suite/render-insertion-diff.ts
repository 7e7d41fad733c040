/** Lines of context around each change, as `diff -u` gives. */
const CONTEXT = 3;

/**
 * A unified diff (`diff -u` form) of `after` against `before`, where `after`
 * is `before` with lines only added, as `validate --fix` makes it. Linear in
 * the texts: `before`'s lines are matched in order against `after`'s (they
 * are a subsequence of them, so matching each at its first chance is exact),
 * with no search. A last line that gains a line end shows as changed, as
 * `diff -u` shows it.
 */
export function renderInsertionDiff(file: string, before: string, after: string): string {
  const a = splitForDiff(before);
  const b = splitForDiff(after);
  const gainsLineEnd = before !== "" && !before.endsWith("\n") && after.endsWith("\n");
  const ops: Array<{ kind: " " | "+" | "-"; text: string; lastOld?: boolean }> = [];
  let i = 0;
  for (const line of b) {
    const last = i === a.length - 1;
    // The old last line, without a line end, gains one: with CRLF line ends its CR comes with it.
    if (last && gainsLineEnd && (line === a[i] || line === `${a[i]}\r`)) {
      ops.push({ kind: "-", text: a[i] as string, lastOld: true }, { kind: "+", text: line });
      i++;
    } else if (i < a.length && a[i] === line) {
      ops.push({ kind: " ", text: line, lastOld: last && !before.endsWith("\n") });
      i++;
    } else ops.push({ kind: "+", text: line });
  }
  const changes = ops.flatMap((o, n) => (o.kind === " " ? [] : [n]));
  const out = [`--- a/${file}`, `+++ b/${file}`];
  for (let g = 0; g < changes.length; ) {
    // One hunk holds every change within 2·CONTEXT unchanged lines of the one before.
    let h = g;
    while (h + 1 < changes.length && (changes[h + 1] as number) - (changes[h] as number) - 1 <= 2 * CONTEXT) h++;
    const start = Math.max(0, (changes[g] as number) - CONTEXT);
    const end = Math.min(ops.length, (changes[h] as number) + 1 + CONTEXT);
    const head = ops.slice(0, start);
    const slice = ops.slice(start, end);
    const aStart = head.filter((o) => o.kind !== "+").length;
    const bStart = head.filter((o) => o.kind !== "-").length;
    const aLen = slice.filter((o) => o.kind !== "+").length;
    const bLen = slice.filter((o) => o.kind !== "-").length;
    out.push(`@@ -${aLen === 0 ? aStart : aStart + 1},${aLen} +${bLen === 0 ? bStart : bStart + 1},${bLen} @@`);
    for (const o of slice) {
      out.push(`${o.kind}${o.text}`);
      if (o.lastOld) out.push("\\ No newline at end of file");
    }
    g = h + 1;
  }
  return out.join("\n");
}

/** Lines as `diff` counts them: a line end ends a line, so a text ending in one has no empty last line. */
function splitForDiff(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}
