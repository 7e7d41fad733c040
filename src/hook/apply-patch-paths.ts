/**
 * The files a Codex `apply_patch` envelope touches: every `*** Add File:`,
 * `*** Update File:`, `*** Delete File:` and `*** Move to:` header (read, as
 * Codex reads them, with surrounding whitespace trimmed). An envelope naming
 * no file yields none, which the hook denies.
 */
export function applyPatchPaths(patch: string): string[] {
  const out: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const m = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/.exec(line.trim());
    if (m?.[1]) out.push(m[1].trim());
  }
  return out;
}
