/**
 * How many presentations of frozen records one process keeps. Each is
 * bounded by RECORD_SHOW_BUDGET and RECORD_DIFF_BUDGET (a few hundred KB at
 * most), so the cache holds tens of MB at worst however large the records,
 * and more revisions than a reviewer moves between. (A revision pushed out is
 * read again when next asked for: an agent that froze more revisions than
 * this can make the server read one per request.)
 */
export const PRESENTATIONS_KEPT = 32;

const kept = new Map<string, Promise<unknown>>();

/**
 * The presentation made for `key`, made by `make` the first time (and after
 * it was dropped, the least recently used first). The key names everything
 * the presentation is made from — the revision's handoff hash (the frozen
 * bytes never change under it), the previous one's, the pinned policy — so
 * records are read and diffed once per change, not per request; requests
 * that ask while it is being made wait for that one making. A `make` that
 * fails keeps nothing.
 */
export function rememberPresentation<T>(key: string, make: () => Promise<T>): Promise<T> {
  const found = kept.get(key);
  if (found !== undefined) {
    kept.delete(key);
    kept.set(key, found);
    return found as Promise<T>;
  }
  const made = make();
  kept.set(key, made);
  made.catch(() => {
    if (kept.get(key) === made) kept.delete(key);
  });
  while (kept.size > PRESENTATIONS_KEPT) kept.delete(kept.keys().next().value as string);
  return made;
}
