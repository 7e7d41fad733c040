import type { RunStore } from "../store/run-store.js";

/**
 * The folders of every run the store holds but `ref` (folder store; none
 * for a store whose runs are not files): what `agentHandoffPath` keeps an
 * agent's freeze out of, so a run nested in another run's folder stays its
 * own token's.
 */
export async function otherRunFolders(store: RunStore, ref: string): Promise<string[]> {
  if (store.runFolder(ref) === undefined) return [];
  const folders: string[] = [];
  for (const listing of await store.list()) {
    if (listing.ref === ref) continue;
    try {
      const folder = store.runFolder(listing.ref);
      if (folder !== undefined) folders.push(folder);
    } catch {
      // A run whose folder is gone holds nothing to keep apart.
    }
  }
  return folders;
}
